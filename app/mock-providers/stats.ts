import { sql } from "kysely";
import { providerDb } from "./db";

/** What the mock providers saw: request counts by provider, operation and outcome. */
export interface RequestCount {
  provider: string;
  operation: string;
  outcome: string;
  count: number;
}

export async function requestCounts(runId?: string): Promise<RequestCount[]> {
  const { rows } = await sql<RequestCount>`
    select provider, operation, outcome, count(*)::int as count from mock_provider_requests
    where ${runId === undefined ? sql`true` : sql`run_id = ${runId}`}
    group by provider, operation, outcome
    order by provider, operation, outcome`.execute(providerDb());
  return rows;
}

export interface RecentRequest {
  id: number;
  provider: string;
  operation: string;
  idempotencyKey: string | null;
  runId: string | null;
  outcome: string;
  detail: string | null;
  at: string;
}

export interface RequestLogPage {
  requests: RecentRequest[];
  /** The `before` of the next (older) page; null on the last one. */
  nextBefore: number | null;
}

/** One page of the request log, newest first: `runId` keeps one run's, `before` starts below that row id. */
export async function requestLog({
  runId,
  before,
  limit = 50,
}: {
  runId?: string;
  before?: number;
  limit?: number;
}): Promise<RequestLogPage> {
  const { rows } = await sql<any>`
    select id, provider, operation, idempotency_key, run_id, outcome, detail, created_at
    from mock_provider_requests
    where ${runId === undefined ? sql`true` : sql`run_id = ${runId}`}
      and ${before === undefined ? sql`true` : sql`id < ${before}`}
    order by id desc limit ${limit + 1}`.execute(providerDb());
  const requests = rows.slice(0, limit).map((row) => ({
    id: Number(row.id),
    provider: row.provider,
    operation: row.operation,
    idempotencyKey: row.idempotency_key,
    runId: row.run_id,
    outcome: row.outcome,
    detail: row.detail,
    at: new Date(row.created_at).toISOString(),
  }));
  return { requests, nextBefore: rows.length > limit ? requests[requests.length - 1]!.id : null };
}

export interface ProviderTotals {
  charges: number;
  refunds: number;
  settled: number;
  emails: number;
  operations: number;
  webhooks: { delivered: number; duplicate: number; refused: number };
}

export async function providerTotals(): Promise<ProviderTotals> {
  const db = providerDb();
  const { rows } = await sql<any>`
    select
      (select count(*)::int from mock_payments where kind = 'charge') as charges,
      (select count(*)::int from mock_payments where kind = 'refund') as refunds,
      (select count(*)::int from mock_payments where status = 'settled') as settled,
      (select count(*)::int from mock_email_messages) as emails,
      (select count(*)::int from mock_operations) as operations,
      (select count(*)::int from mock_webhook_deliveries where outcome = 'delivered') as delivered,
      (select count(*)::int from mock_webhook_deliveries where outcome = 'duplicate') as duplicate,
      (select count(*)::int from mock_webhook_deliveries where outcome = 'refused') as refused`.execute(db);
  const r = rows[0];
  return {
    charges: r.charges,
    refunds: r.refunds,
    settled: r.settled,
    emails: r.emails,
    operations: r.operations,
    webhooks: { delivered: r.delivered, duplicate: r.duplicate, refused: r.refused },
  };
}

/** Sums `counts` matching provider / operation / outcome (any of them when omitted). */
export function sumOf(
  counts: RequestCount[],
  match: Partial<Pick<RequestCount, "provider" | "operation">> & { outcome?: string | string[] },
): number {
  const outcomes = match.outcome === undefined ? null : [match.outcome].flat();
  return counts
    .filter(
      (c) =>
        (match.provider === undefined || c.provider === match.provider) &&
        (match.operation === undefined || c.operation === match.operation),
    )
    .filter((c) => outcomes === null || outcomes.includes(c.outcome))
    .reduce((sum, c) => sum + c.count, 0);
}
