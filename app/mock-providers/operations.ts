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
 * A mock long-running operation API (think video transcoding, a data export, a model fine-tune):
 * submit once with an idempotency key, get an operation id back, then poll it until it is done.
 * A submit may lose its response (the retry finds the same operation); a poll fails now and then.
 */

export interface Operation {
  id: string;
  state: "queued" | "running" | "succeeded";
  progress: number;
  result: { url: string; rows: number } | null;
}

export async function submitOperation(request: {
  runId: string;
  kind: string;
  idempotencyKey: string;
}): Promise<{ operationId: string }> {
  await latency(100, 300);
  const entry = {
    provider: "operations" as const,
    operation: "submit",
    key: request.idempotencyKey,
    runId: request.runId,
  };
  const before = await earlierRequests("operations", "submit", request.idempotencyKey);
  if (before < plannedFailures(request.idempotencyKey, 1)) {
    await insertOnce(request);
    return failAsPlanned(
      entry,
      new MockProviderError(504, "gateway timeout (the operation was created; the response was lost)"),
      "lost_response",
    );
  }
  const { id, created } = await insertOnce(request);
  await logRequest({ ...entry, outcome: created ? "created" : "deduped", detail: id });
  return { operationId: id };
}

/** One status read. It fails transiently about one time in five. */
export async function getOperation(operationId: string): Promise<Operation> {
  await latency(40, 150);
  const db = providerDb();
  const { rows } = await sql<{ id: string; run_id: string | null; elapsed_ms: number; duration_ms: number }>`
    select id, run_id, duration_ms, (extract(epoch from (clock_timestamp() - submitted_at)) * 1000)::int as elapsed_ms
    from mock_operations where id = ${operationId}`.execute(db);
  const row = rows[0];
  const entry = { provider: "operations" as const, operation: "get", key: null, runId: row?.run_id ?? null };
  if (!row)
    return failAsPlanned(
      { ...entry, key: operationId },
      new MockProviderError(404, `no operation ${operationId}`, false),
    );
  if (Math.random() < 0.2)
    return failAsPlanned({ ...entry, key: operationId }, new MockProviderError(503, "status service overloaded"));
  const progress = Math.min(1, row.elapsed_ms / row.duration_ms);
  const state: Operation["state"] = progress >= 1 ? "succeeded" : progress < 0.15 ? "queued" : "running";
  const operation: Operation = {
    id: row.id,
    state,
    progress: Math.round(progress * 100) / 100,
    result:
      state === "succeeded"
        ? { url: `https://files.example.com/exports/${row.id}.csv`, rows: 1000 + (row.duration_ms % 9000) }
        : null,
  };
  await logRequest({ ...entry, key: operationId, outcome: "ok", detail: `${state} ${Math.round(progress * 100)}%` });
  return operation;
}

async function insertOnce(request: {
  runId: string;
  kind: string;
  idempotencyKey: string;
}): Promise<{ id: string; created: boolean }> {
  // 6–12 s of "work", so the demo shows a few polls.
  const durationMs = 6000 + plannedFailures(`${request.idempotencyKey}:duration`, 6000);
  const { rows } = await sql<{ id: string; created: boolean }>`
    with inserted as (
      insert into mock_operations (id, idempotency_key, run_id, kind, duration_ms)
      values (${providerId("op")}, ${request.idempotencyKey}, ${request.runId}, ${request.kind}, ${durationMs})
      on conflict (idempotency_key) do nothing
      returning id
    )
    select id, true as created from inserted
    union all
    select id, false as created from mock_operations
    where idempotency_key = ${request.idempotencyKey} and not exists (select 1 from inserted)`.execute(providerDb());
  return rows[0]!;
}
