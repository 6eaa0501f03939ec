import { sql } from "kysely";
import { type RowObject, type RunRecord, type StepRecord, toRunRecord, toStepRecord } from "./rows";
import type { DurableDb } from "./tables";

export interface ClaimedRun {
  run: RunRecord;
  /** The ledger: every step row of the run, in the order they were first reached. */
  steps: StepRecord[];
  /** The previous claim was lost (its lease ran out): this claim healed the run. */
  healed: boolean;
  /** The database clock at the claim. */
  now: Date;
  /** The same, as the server wrote it (to the microsecond): where a new event wait counts from. */
  nowText?: string;
  /** The oldest deliveries no wait has taken yet, oldest first (at most 100). */
  mailbox: MailboxEntry[];
}

/** A delivery in the run's mailbox. `omitted`: its payload is over the inline limit, not loaded. */
export interface MailboxEntry {
  seq: number;
  name: string;
  payload: unknown;
  omitted: boolean;
}

export interface ClaimRequest {
  /** Only runs of these workflows: an instance never claims what it cannot run. */
  workflows: readonly string[];
  /** Claim exactly this run, if it is due; otherwise the most overdue run. */
  runId?: string;
  /** How long the claim lasts, measured on the database clock from the claim. */
  leaseMs: number;
  /** Runs this invocation already gave back: the same tick does not take them again. */
  exclude?: readonly string[];
  /** The concurrency limit of each workflow that has one: a full key's runs stay due. */
  limits?: Readonly<Record<string, number>>;
  /** Each name and the versions this instance registered ("" for none); absent: any version. */
  versions?: Readonly<Record<string, readonly string[]>>;
  /** The rate limit of each workflow that has one: a key's first claims per period (0010). */
  rates?: Readonly<Record<string, { limit: number; periodMs: number }>>;
}

/** A claim that stops at one of its bounds (docs/sql.md, "durable_claim_run") is asked again this often at most. */
const MORE_ROUNDS = 100;

/**
 * Claims one due run in one round trip (durable_claim_run): SKIP LOCKED pick of a registered
 * (workflow, version) by priority, concurrency and rate limits,
 * fence bump, lease from the database clock, due waits answered, ledger load. docs/sql.md says why each part is
 * there. Returns null when nothing claimable is due (or the run is held by someone else). A claim
 * that stopped at a bound (a held backlog, skipped keys, overdue runs ended) with runs it did not
 * reach answers "more", and is asked again: each such answer moved runs out of the way.
 */
export async function claimDueRun(db: DurableDb, request: ClaimRequest): Promise<ClaimedRun | null> {
  const p = claimParameters(request);
  for (let round = 0; round < MORE_ROUNDS; round++) {
    const { rows } = await sql<{ claimed: RowObject | null }>`
      select durable_claim_run(${p.workflows}::jsonb, ${request.runId ?? null}::text, ${p.leaseMs}::bigint,
                               ${p.exclude}::jsonb, ${p.limits}::jsonb, ${p.versions}::jsonb,
                               ${p.rates}::jsonb, true, true) as claimed`.execute(db);
    const answer = toClaimAnswer(rows[0]?.claimed ?? null);
    if (answer !== "more") return answer;
  }
  return null;
}

/**
 * Claims up to `count` due runs in one round trip (durable_claim_runs; docs/decisions.md, "Batched
 * claims"): each under its own fence and lease, by the same order, keys, limits and rates as that
 * many claimDueRun calls. Fewer runs than `count`: nothing more was claimable. A batch that stopped
 * at a bound is asked again for the rest, as claimDueRun asks again. A count of 1 is claimDueRun.
 */
export async function claimDueRuns(db: DurableDb, request: ClaimRequest, count: number): Promise<ClaimedRun[]> {
  if (count <= 1) {
    const claim = await claimDueRun(db, { ...request, runId: undefined });
    return claim ? [claim] : [];
  }
  const p = claimParameters(request);
  const claims: ClaimedRun[] = [];
  for (let round = 0; round < MORE_ROUNDS && claims.length < count; round++) {
    const { rows } = await sql<{ claimed: RowObject }>`
      select durable_claim_runs(${count - claims.length}::integer, ${p.workflows}::jsonb, ${p.leaseMs}::bigint,
                                ${p.exclude}::jsonb, ${p.limits}::jsonb, ${p.versions}::jsonb,
                                ${p.rates}::jsonb) as claimed`.execute(db);
    const answer = rows[0]!.claimed;
    for (const claimed of answer.claims as RowObject[]) claims.push(toClaimedRun(claimed)!);
    if (!answer.more) break;
  }
  return claims;
}

/** A claim request as durable_claim_run's arguments take it (also sent by finishRunAndClaim). */
export function claimParameters(request: ClaimRequest) {
  return {
    workflows: JSON.stringify(request.workflows),
    leaseMs: Math.ceil(request.leaseMs),
    exclude: JSON.stringify(request.exclude ?? []),
    limits: JSON.stringify(request.limits ?? {}),
    versions: request.versions ? JSON.stringify(request.versions) : null,
    rates: JSON.stringify(request.rates ?? {}),
  };
}

/** durable_claim_run's answer: a ClaimedRun, null (nothing claimable due), or "more" (stopped at a bound). */
export function toClaimAnswer(claimed: RowObject | null): ClaimedRun | null | "more" {
  if (claimed?.more) return "more";
  return toClaimedRun(claimed);
}

/** durable_claim_run's answer as a ClaimedRun (null: nothing was claimed). */
export function toClaimedRun(claimed: RowObject | null): ClaimedRun | null {
  if (!claimed?.run) return null;
  return {
    run: toRunRecord(claimed.run),
    steps: (claimed.steps as RowObject[]).map(toStepRecord),
    healed: Boolean(claimed.healed),
    now: new Date(claimed.now),
    nowText: String(claimed.now),
    mailbox: ((claimed.mailbox ?? []) as RowObject[]).map((entry) => ({
      seq: Number(entry.seq),
      name: entry.name,
      payload: entry.payload ?? null,
      omitted: Boolean(entry.omitted),
    })),
  };
}
