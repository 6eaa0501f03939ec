// Kysely table types for the durable_* tables (store/migrations/*.sql is the source of truth).
import type { ColumnType, Generated, Kysely, Transaction } from "kysely";

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json = ColumnType<unknown, string, string>;

export interface DurableRunsTable {
  id: string;
  workflow: string;
  status: "pending" | "running" | "waiting" | "completed" | "failed" | "cancelled";
  input: Json;
  output: Json | null;
  error: Json | null;
  wake_at: Timestamp | null;
  waiting_for: Json | null;
  lease_until: Timestamp | null;
  fence: Generated<number>;
  attempts: Generated<number>;
  lost_claims: Generated<number>;
  lost_lease_until: Timestamp | null;
  warnings: Generated<unknown>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  finished_at: Timestamp | null;
  /** The seq of the run's last stream chunk (0003). */
  stream_seq: Generated<number>;
  /** Workflow option `concurrency`: the key computed from the input at start (0004). */
  concurrency_key: string | null;
  /** Workflow option `singleton`: one non-terminal run per workflow and key (0004). */
  singleton_key: string | null;
  /** The workflow's version at start; null when it declares none (0005). */
  version: string | null;
  /** When retention deleted the run's steps, signals and stream chunks (0005). */
  compacted_at: Timestamp | null;
  /** The run whose `invoke` or `start` started it (0008). */
  parent_id: string | null;
  /** Past it the run fails with `deadline_exceeded` (0008). */
  deadline_at: Timestamp | null;
  /** Not claimed for the first time by then, the run fails with `expired` (0008). */
  expire_at: Timestamp | null;
  /** Claimed by priority, higher first, then due time (0010). */
  priority: Generated<number>;
  /** When the run was first claimed (0010). */
  first_claimed_at: Timestamp | null;
  /** Workflow option `rateLimit`: the key ('' for the whole workflow), and the slot a held run waits for (0010). */
  rate_key: string | null;
  rate_slot_at: Timestamp | null;
  /** The limit a held run was held under, '<limit>/<periodMs>' (0012). */
  rate_hold: string | null;
  /** Workflow option `debounce`: the key computed at start (0010). */
  debounce_key: string | null;
  /** `start(..., { tags })` (0011). */
  tags: ColumnType<string[], string[] | undefined, string[]>;
  /** What `ctx.setMetadata` merged in (0011). */
  metadata: ColumnType<Record<string, unknown>, string | undefined, string>;
  /** A fork's source run and the step it was forked from (0011). */
  forked_from: string | null;
  forked_from_step: string | null;
  /** `ctx.continueAsNew`: the successor this run ended into; on the successor, the run it continues (0015). */
  continued_as: string | null;
  continued_from: string | null;
  /** What the run's end starts (0017): targets by status; {"followup": true} on a follow-up. */
  followups: unknown | null;
}

export interface DurableStepsTable {
  run_id: string;
  step_id: string;
  seq: number;
  kind: "run" | "tx" | "value" | "sleep" | "signal" | "poll" | "ai" | "invoke" | "start" | "any" | "callback" | "event";
  status: "running" | "waiting" | "completed" | "failed";
  attempt: Generated<number>;
  result: Json | null;
  error: Json | null;
  deadline_at: Timestamp | null;
  wake_at: Timestamp | null;
  polls: Generated<number>;
  external_key: string | null;
  fence: number;
  started_at: Generated<Date>;
  completed_at: Timestamp | null;
  updated_at: Generated<Date>;
  /** A signal wait: the signal name it waits for (0002). */
  signal_name: string | null;
  /** Bytes of the result's JSON text; null before 0002. */
  result_bytes: number | null;
  /** A race's branches (invoke, waitForAny, waitForCallback) (0008). */
  branches: Json | null;
  /** The runs a race waits on (0008). */
  target_runs: string[] | null;
  /** A wait for an event (waitForEvent): { match?, since } (0016). */
  event_wait: Json | null;
}

/** An event `durable.publish` inserted (0016): `data` sealed when encryption is on. */
export interface DurableAppEventsTable {
  id: string;
  name: string;
  data: Json;
  source: string | null;
  created_at: Generated<Date>;
}

export interface DurableSignalsTable {
  run_id: string;
  name: string;
  payload: Json;
  delivery_id: string | null;
  created_at: Generated<Date>;
  /** Arrival order of the run's deliveries (0002). */
  seq: Generated<number>;
  /** The step id of the wait that took this delivery; null while it waits in the mailbox (0002). */
  taken_by: string | null;
  /** Bytes of the payload's JSON text; null before 0002. */
  payload_bytes: number | null;
}

export interface DurableEventsTable {
  id: Generated<number>;
  run_id: string;
  kind: string;
  step_id: string | null;
  fence: number | null;
  data: ColumnType<unknown, string | undefined, string>;
  created_at: Generated<Date>;
}

/** A run's stream: chunks appended by its owner under the fence (0003). */
export interface DurableStreamChunksTable {
  run_id: string;
  seq: number;
  step_id: string;
  attempt: number;
  data: Json;
  created_at: Generated<Date>;
}

/** A callback URL's capability and its first delivery (0008). */
export interface DurableCallbacksTable {
  id: string;
  run_id: string;
  step_id: string;
  schema: Json | null;
  deadline_at: Timestamp | null;
  payload: Json | null;
  payload_bytes: number | null;
  delivery_key: string | null;
  delivered_at: Timestamp | null;
  created_at: Generated<Date>;
}

/** A chat's active turn: the run of its latest turn (0009). */
export interface DurableChatsTable {
  chat_id: string;
  run_id: string;
  updated_at: Generated<Date>;
}

/** A scheduled workflow's next slot (0004). */
export interface DurableSchedulesTable {
  workflow: string;
  cron: string;
  timezone: string;
  next_slot: Timestamp;
  last_slot: Timestamp | null;
  last_run_id: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** A person's decision on an approval wait (0018; docs/guide/approvals.md). */
export interface DurableApprovalDecisionsTable {
  run_id: string;
  step_id: string;
  actor: string;
  approved: boolean;
  /** Sealed like an error message (engine/payloads.ts); null when none was given. */
  reason: Json | null;
  decided_at: Generated<Date>;
}

export interface DurableTables {
  durable_runs: DurableRunsTable;
  durable_steps: DurableStepsTable;
  durable_signals: DurableSignalsTable;
  durable_events: DurableEventsTable;
  durable_stream_chunks: DurableStreamChunksTable;
  durable_schedules: DurableSchedulesTable;
  durable_callbacks: DurableCallbacksTable;
  durable_chats: DurableChatsTable;
  durable_app_events: DurableAppEventsTable;
  durable_approval_decisions: DurableApprovalDecisionsTable;
}

/** The database as the store sees it: only the durable_* tables, whatever else the app keeps there. */
export type DurableDb = Kysely<DurableTables>;
/** A handle a statement can run on: the database, or a `tx` step's transaction. */
export type Executor = Kysely<DurableTables> | Transaction<DurableTables>;
