// Runs and steps as the engine's SQL functions return them (jsonb with snake_case keys and
// timestamps as ISO text), turned into typed records once, here.
import type { RunState, StepKind, StepState, StoredError, WaitingFor } from "../types";

export interface RunRecord {
  id: string;
  workflow: string;
  status: RunState;
  input: unknown;
  output: unknown;
  error: StoredError | null;
  wakeAt: Date | null;
  waitingFor: WaitingFor | null;
  leaseUntil: Date | null;
  fence: number;
  attempts: number;
  lostClaims: number;
  lostLeaseUntil: Date | null;
  warnings: string[];
  createdAt: Date;
  updatedAt: Date;
  /** Workflow options `concurrency` and `singleton`: the keys computed at start (null: none). */
  concurrencyKey: string | null;
  singletonKey: string | null;
  /** The workflow's version at start (null: it declares none). */
  version: string | null;
  /** The run whose `invoke` or `start` started it (null: none). */
  parentId: string | null;
  /** Its deadline and the end of its ttl (null: none). */
  deadlineAt: Date | null;
  expireAt: Date | null;
  /** `start(..., { tags })` and what `ctx.setMetadata` merged in (0011). */
  tags: string[];
  metadata: Record<string, unknown>;
  /** A fork's source run and the step it was forked from (0011; null: not a fork). */
  forkedFrom: { runId: string; stepId: string } | null;
  /** `ctx.continueAsNew`: the successor this run ended into, and the run this one continues (0015). */
  continuedAs: string | null;
  continuedFrom: string | null;
}

export interface StepRecord {
  stepId: string;
  seq: number;
  kind: StepKind;
  status: StepState;
  attempt: number;
  result: unknown;
  /** The result is over the inline limit and was left out of the claim: read it when reached. */
  resultOmitted: boolean;
  error: StoredError | null;
  wakeAt: Date | null;
  deadlineAt: Date | null;
  polls: number;
  externalKey: string | null;
  startedAt: Date | null;
  completedAt: Date | null;
  /** A race's branches as stored (sleep branches with their wake time), and the runs it waits on. */
  branches?: RaceBranchRow[];
  targetRuns?: string[];
  /** An event wait (0016): the name, and { match?, since } as stored. */
  eventWait?: { name: string; match?: Record<string, unknown>; since: string };
}

/** A stored branch of a race: its name and one of signal, wake_at, run, callback. */
export interface RaceBranchRow {
  name: string;
  signal?: string;
  wake_at?: string;
  run?: string;
  callback?: string;
}

/** A row as the SQL functions (jsonb) or Kysely (Dates) return it. */
export type RowObject = Record<string, any>;

// A wait with no deadline parks its run at wake_at = 'infinity': no time a reader can show.
// A time past year 9999, which a release before docs/rules.md, rule 19 could store, comes as
// jsonb text JavaScript cannot read ("33715-08-30T…"): it is later than any time stored now, so it
// reads as JavaScript's last instant (never) rather than as none (a sleep that had passed).
const date = (value: unknown): Date | null => {
  if (value == null) return null;
  const parsed = new Date(value as string);
  if (Number.isFinite(parsed.getTime())) return parsed;
  return typeof value === "string" && /^\d{5,}-/.test(value) ? new Date(8.64e15) : null;
};

export function toRunRecord(row: RowObject): RunRecord {
  return {
    id: row.id,
    workflow: row.workflow,
    status: row.status,
    input: row.input,
    output: row.output ?? null,
    error: row.error ?? null,
    wakeAt: date(row.wake_at),
    waitingFor: row.waiting_for ?? null,
    leaseUntil: date(row.lease_until),
    fence: Number(row.fence),
    attempts: Number(row.attempts),
    lostClaims: Number(row.lost_claims),
    lostLeaseUntil: date(row.lost_lease_until),
    warnings: Array.isArray(row.warnings) ? row.warnings : [],
    createdAt: date(row.created_at)!,
    updatedAt: date(row.updated_at)!,
    concurrencyKey: row.concurrency_key ?? null,
    singletonKey: row.singleton_key ?? null,
    version: row.version ?? null,
    parentId: row.parent_id ?? null,
    deadlineAt: date(row.deadline_at),
    expireAt: date(row.expire_at),
    tags: Array.isArray(row.tags) ? row.tags : [],
    metadata: row.metadata && typeof row.metadata === "object" ? row.metadata : {},
    forkedFrom: row.forked_from ? { runId: row.forked_from, stepId: row.forked_from_step } : null,
    continuedAs: row.continued_as ?? null,
    continuedFrom: row.continued_from ?? null,
  };
}

export function toStepRecord(row: RowObject): StepRecord {
  return {
    stepId: row.step_id,
    seq: Number(row.seq),
    kind: row.kind,
    status: row.status,
    attempt: Number(row.attempt),
    result: row.result ?? null,
    resultOmitted: Boolean(row.result_omitted),
    error: row.error ?? null,
    wakeAt: date(row.wake_at),
    deadlineAt: date(row.deadline_at),
    polls: Number(row.polls ?? 0),
    externalKey: row.external_key ?? null,
    startedAt: date(row.started_at),
    completedAt: date(row.completed_at),
    ...(row.branches ? { branches: row.branches, targetRuns: row.target_runs ?? [] } : {}),
    ...(row.event_wait ? { eventWait: { ...row.event_wait, name: row.signal_name } } : {}),
  };
}
