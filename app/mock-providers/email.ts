import { sql } from "kysely";
import { providerDb } from "./db";
import {
  earlierRequests,
  failAsPlanned,
  latency,
  logRequest,
  MockProviderError,
  plannedFailures,
  providerId,
} from "./simulate";

/**
 * A flaky mock email API: it rate-limits (429 with a retry-after), has outages (503), and sometimes
 * accepts a message but loses the response. An idempotency key makes a retried send a no-op that
 * returns the first message id, so a recipient never gets the same email twice.
 */

export class RateLimitedError extends MockProviderError {
  constructor(readonly retryAfterMs: number) {
    super(429, `rate limited, retry after ${retryAfterMs / 1000}s`);
    this.name = "RateLimitedError";
  }
}

export interface EmailRequest {
  runId: string;
  to: string;
  subject: string;
  idempotencyKey: string;
}

/** Sends one email; up to three transient failures are planned per idempotency key. */
export async function sendEmail(request: EmailRequest): Promise<{ messageId: string; deduped: boolean }> {
  await latency(80, 300);
  const entry = { provider: "email" as const, operation: "send", key: request.idempotencyKey, runId: request.runId };
  const before = await earlierRequests("email", "send", request.idempotencyKey);
  const planned = plannedFailures(request.idempotencyKey, 3);
  if (before < planned) {
    // A different failure each time, in the order real APIs tend to produce them.
    const failure = (before + planned) % 3;
    if (failure === 0) return failAsPlanned(entry, new RateLimitedError(1500));
    if (failure === 1) return failAsPlanned(entry, new MockProviderError(503, "upstream mail server unavailable"));
    await insertOnce(request);
    return failAsPlanned(
      entry,
      new MockProviderError(502, "bad gateway (the message was accepted; the response was lost)"),
      "lost_response",
    );
  }
  const { id, created } = await insertOnce(request);
  await logRequest({ ...entry, outcome: created ? "created" : "deduped", detail: `${id} to ${request.to}` });
  return { messageId: id, deduped: !created };
}

async function insertOnce(request: EmailRequest): Promise<{ id: string; created: boolean }> {
  const { rows } = await sql<{ id: string; created: boolean }>`
    with inserted as (
      insert into mock_email_messages (id, idempotency_key, run_id, recipient, subject)
      values (${providerId("em")}, ${request.idempotencyKey}, ${request.runId}, ${request.to}, ${request.subject})
      on conflict (idempotency_key) do nothing
      returning id
    )
    select id, true as created from inserted
    union all
    select id, false as created from mock_email_messages
    where idempotency_key = ${request.idempotencyKey} and not exists (select 1 from inserted)`.execute(providerDb());
  return rows[0]!;
}
