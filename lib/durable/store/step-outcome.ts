import type { StepKind, StoredError } from "../types";
import type { RunToInsert } from "./insert-run";

/** One step outcome as the owner writes it. `resultJson` is JSON text (see json.ts). */
export interface StepOutcome {
  stepId: string;
  seq: number;
  kind: StepKind;
  status: "completed" | "failed" | "waiting";
  attempt: number;
  resultJson?: string;
  /**
   * The UTF-8 bytes of the result's plaintext JSON, when `resultJson` is sealed (engine/payloads.ts):
   * limits are measured on the plaintext. Absent: the length of `resultJson`.
   */
  resultBytes?: number;
  error?: StoredError;
  externalKey?: string;
  /** How long the body ran, by the app's monotonic clock; started_at = durable_now() − elapsed. */
  elapsedMs?: number;
  wakeAt?: Date;
  /** Wake this long after the database clock at the write (a retry's due time). */
  wakeInMs?: number;
  deadlineAt?: Date;
  /** A new wait's deadline, this long after the database clock at the write (never moves after). */
  deadlineInMs?: number;
  /** Polls made so far (waitFor). */
  polls?: number;
  /** A signal wait: the name it waits for, and the delivery its receipt takes from the mailbox. */
  signalName?: string;
  signalSeq?: number;
  /** A callback's receipt: the capability row written with it (its id and payload JSON Schema). */
  callback?: { id: string; schema: unknown };
  /** ctx.setMetadata's patches since the last write: merged into the run's metadata with this receipt. */
  metadata?: Record<string, unknown>;
  /** A `ctx.step.start` receipt: the child it starts, inserted under the fence with the receipt. */
  start?: ChildToStart;
}

/**
 * The run a `ctx.step.start` inserts (durable_insert_child): a start's fields of a run to insert,
 * `inputJson` the stored input's JSON text; its parent's deadline caps `deadlineInMs`.
 */
export type ChildToStart = Pick<
  RunToInsert,
  | "id"
  | "workflow"
  | "inputJson"
  | "version"
  | "concurrencyKey"
  | "singletonKey"
  | "deadlineInMs"
  | "rateKey"
  | "priority"
  | "followups"
>;

/**
 * An outcome as the SQL functions take it (jsonb, snake_case). The result is spliced in as raw
 * JSON text, so it is stored exactly as the body saw it.
 */
export function stepOutcomeJson(outcome: StepOutcome): string {
  const step = {
    step_id: outcome.stepId,
    seq: outcome.seq,
    kind: outcome.kind,
    status: outcome.status,
    attempt: outcome.attempt,
    error: outcome.error ?? null,
    external_key: outcome.externalKey ?? null,
    elapsed_ms: Math.max(0, Math.round(outcome.elapsedMs ?? 0)),
    wake_at: outcome.wakeAt?.toISOString() ?? null,
    wake_in_ms: outcome.wakeInMs === undefined ? null : Math.round(outcome.wakeInMs),
    deadline_at: outcome.deadlineAt?.toISOString() ?? null,
    deadline_in_ms: outcome.deadlineInMs === undefined ? null : Math.round(outcome.deadlineInMs),
    polls: outcome.polls ?? null,
    result_bytes:
      outcome.resultJson === undefined ? null : (outcome.resultBytes ?? Buffer.byteLength(outcome.resultJson, "utf8")),
    ...(outcome.signalName === undefined ? {} : { signal_name: outcome.signalName }),
    ...(outcome.signalSeq === undefined ? {} : { signal_seq: outcome.signalSeq }),
    ...(outcome.callback === undefined ? {} : { callback: outcome.callback }),
    ...(outcome.metadata === undefined ? {} : { metadata: outcome.metadata }),
  };
  const start = outcome.start === undefined ? "" : `,"start":${childJson(outcome.start)}`;
  return `${JSON.stringify(step).slice(0, -1)}${start},"result":${outcome.resultJson ?? "null"}}`;
}

/** A child to start as durable_insert_child takes it, its input spliced in as the stored JSON text. */
function childJson(child: ChildToStart): string {
  const fields = {
    id: child.id,
    workflow: child.workflow,
    version: child.version ?? null,
    concurrency_key: child.concurrencyKey ?? null,
    singleton_key: child.singletonKey ?? null,
    deadline_in_ms: child.deadlineInMs == null ? null : Math.ceil(child.deadlineInMs),
    rate_key: child.rateKey ?? null,
    priority: child.priority ?? 0,
    followups: child.followups ?? null,
  };
  return `${JSON.stringify(fields).slice(0, -1)},"input":${child.inputJson}}`;
}
