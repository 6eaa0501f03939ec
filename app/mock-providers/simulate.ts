import { createHash, randomBytes } from "node:crypto";
import { sql } from "kysely";
import { providerDb } from "./db";

/**
 * What makes the mock providers behave like real ones: network latency, transient failures
 * (503, 429, and the nasty one: the provider did the work but the response was lost), and a log of
 * every request they received, so the provider page can show what the idempotency keys bought.
 *
 * Failures are planned per idempotency key (a hash of it), not drawn at random on each request,
 * so every demo run shows a few of them and still always succeeds within its retries.
 */

export type ProviderName = "payments" | "email" | "operations";
export type RequestOutcome = "created" | "deduped" | "failed" | "lost_response" | "rejected" | "ok";

/** An error as an HTTP client would raise it: a status and whether a retry may help. */
export class MockProviderError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly transient = status >= 500 || status === 429,
  ) {
    super(`${status} ${message}`);
    this.name = "MockProviderError";
  }
}

/** Waits like a network round trip: `min`–`max` ms. */
export function latency(min = 60, max = 250): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, min + Math.random() * (max - min)));
}

/** 0…max failures planned for this key (stable: the same key always gets the same plan). */
export function plannedFailures(key: string, max: number): number {
  return createHash("sha256").update(key).digest().readUInt32BE(0) % (max + 1);
}

/** `prefix_` + 14 random characters, like the ids real providers hand out. */
export const providerId = (prefix: string) => `${prefix}_${randomBytes(7).toString("hex")}`;

/** How many requests with this key the provider has answered before (its own bookkeeping). */
export async function earlierRequests(provider: ProviderName, operation: string, key: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from mock_provider_requests
    where provider = ${provider} and operation = ${operation} and idempotency_key = ${key}`.execute(providerDb());
  return rows[0]?.n ?? 0;
}

export async function logRequest(entry: {
  provider: ProviderName;
  operation: string;
  key: string | null;
  runId: string | null;
  outcome: RequestOutcome;
  detail?: string;
}): Promise<void> {
  await sql`
    insert into mock_provider_requests (provider, operation, idempotency_key, run_id, outcome, detail)
    values (${entry.provider}, ${entry.operation}, ${entry.key}, ${entry.runId}, ${entry.outcome},
      ${entry.detail ?? null})`.execute(providerDb());
}

/** Fails the request as planned for its key: logs it, then throws what a client would see. */
export async function failAsPlanned(
  entry: { provider: ProviderName; operation: string; key: string; runId: string | null },
  error: MockProviderError,
  outcome: "failed" | "lost_response" = "failed",
): Promise<never> {
  await logRequest({ ...entry, outcome, detail: error.message });
  throw error;
}
