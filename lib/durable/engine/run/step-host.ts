// What a step sees of the invocation that runs it (docs/layout.md, "The step host"): one object of
// verbs, built once per pass by advance.ts (build-step-host.ts), the way graphile-worker compiles
// one options object. Steps import this type and nothing else from engine/; every store write a
// step makes goes through it. This file holds types only, so importing it closes no circle.
import type { z } from "zod";
import type { DurableDb, Executor, RecordResult, StepOutcome, StepRecord, SuccessorToInsert, Wait } from "../../store";
import type { StepKind, StoredError, StreamWriter, WaitingFor } from "../../types";
import type { ComposeSupport } from "../compose-support";
import type { FailpointName } from "./failpoints";

/** Why an execution stops before its body returns. */
export type Stop =
  /** The next step does not fit in the budget: give the run back, due now. */
  | { kind: "yield"; stepId: string }
  /** The body waits (sleep, signal, poll, retry delay): park the run until the earliest wake. */
  | { kind: "suspend"; waits: Wait[]; waitingFor: WaitingFor }
  /** `ctx.continueAsNew`: end the run as completed and start its successor (engine/run/continue-as-new.ts). */
  | { kind: "continue"; successor: SuccessorToInsert }
  /** A mistake the body cannot recover from (a duplicate step id): fail the run now. */
  | { kind: "fail"; error: unknown }
  /** The fence moved on (a newer owner, a heal, a cancel): write nothing more. */
  | { kind: "lost"; reason: string }
  /** Past the invocation's deadline, or the database failed under a write: write nothing more. */
  | { kind: "abandon"; reason: string };

/**
 * What a mocked step attempt does instead of running its body: record `result` (after the same JSON
 * round trip as a real result), fail as if the body threw `error` (a string is an Error's message),
 * or fail with `StepTimeoutError` as the step's `timeout` would. Retries apply as configured.
 */
export type StepMock = { result: unknown } | { error: Error | string } | { timeout: true };

/** What a `durable.step` span's attempt came to (`durable.outcome`). */
export type StepSpanOutcome =
  | "completed" // recorded (or held back to ride on the next write)
  | "failed" // recorded as failed, or the step threw into the body
  | "retry" // failed, recorded as waiting for its retry delay
  | "suspended" // the run parked at this step (a wait, or while it ran)
  | "yielded" // the run was given back while this step waited
  | "lost" // the claim was lost: nothing more was written
  | "abandoned" // past the deadline, or the database failed under a write
  | "stopped"; // the run stopped for another step's mistake

/** How a step's span ends: its outcome and, for a failure or a retry, the error. */
export interface StepSpanEnd {
  outcome: StepSpanOutcome;
  error?: unknown;
}

/** The step a `durable.step` span is about. */
export interface StepSpanInfo {
  stepId: string;
  kind: StepKind;
  attempt: number;
  isReclaim: boolean;
}

/** A step's place in this execution, as `reach` answers it. */
export interface Reached {
  /** The position of the step in this execution. */
  seq: number;
  /** The ledger's row of the step, if any. */
  recorded: StepRecord | undefined;
  /** Whether an earlier, lost execution may have run it (docs/rules.md, rule 7a). */
  isReclaim: boolean;
  /** The attempt an execution of its body now would be: never fewer than may have happened (rule 7a). */
  attempt: number;
}

/** What opens a `tx` step's transaction (steps/tx-step.ts, `TxRunner`). */
export interface TxOpener<H> {
  open<R>(home: DurableDb, work: (store: Executor, handle: H) => Promise<R>, remainingMs: number): Promise<R>;
}

/** A written receipt: its result, and whether another outcome was recorded first. */
export type Written = Extract<RecordResult, { owned: true }>;

/**
 * Whether a step whose body may take a lease can start now: `fits`; `later` (the budget is short:
 * give the run back); `never` (no invocation's budget could fit it); `stopping` (the execution is).
 */
export type Room = "fits" | "later" | "never" | "stopping";

/** The settings a step reads: data, the same for every step of the pass. */
export interface StepSettings {
  /** Default step lease (ms). */
  leaseMs: number;
  /** The largest result a receipt holds (bytes). */
  maxResultBytes: number;
  /** Testing only: sleeps complete at once (docs/guide/testing.md). */
  skipSleeps: boolean;
  log: (message: string) => void;
  /** Whether values are sealed as written (encryption/payload-codec.ts); if not, a result may not hold the prefix. */
  seals: boolean;
}

export interface StepHost {
  readonly runId: string;
  /** Aborted when the execution stops for good (cancel, lost fence, deadline): `ctx.abortSignal`. */
  readonly signal: AbortSignal;
  readonly settings: StepSettings;
  /** When the lease of the claim this run lost ran out (null: it lost none): for StepNotReplaySafeError. */
  readonly lostLeaseUntil: Date | null;
  /** The store's database as an identity, for what a process learns once per database (a cache key). */
  readonly storeKey: object;
  /** Testing only: the mock of a step's attempt (lib/durable/testing.ts, `mockStep`); else undefined. */
  readonly mock: ((stepId: string) => StepMock | undefined) | undefined;
  /** A failpoint of the chaos harness, or null when none is armed: off, it costs one read. */
  readonly failpoint: ((name: FailpointName) => Promise<void> | void) | null;
  /** Child runs, status and callback tokens (engine/compose-support.ts). */
  readonly compose: ComposeSupport | undefined;
  /** The callbacks this execution reached (`ctx.step.callback`), by callback id, with their schemas. */
  readonly callbacks: Map<string, z.ZodType | undefined>;
  /** Whether the execution is stopping: no new work starts. */
  readonly stopping: boolean;
  /** Why the execution stops, once it does. */
  readonly stopReason: Stop | null;
  /** Whether a wait reached now may still join the stop (before any, or while it is a suspension). */
  readonly acceptsWaits: boolean;
  /** Where a new event wait counts from by default: this pass's claim, as the server wrote its time. */
  readonly claimTime: string;

  /**
   * Before a step starts: writes the held-back receipt, if any (steps started together share the
   * write). Null: none is held. False: it could not be written, and the execution is stopping.
   */
  flushHeld(): Promise<boolean> | null;
  /** Marks `stepId` as reached: refuses a second use and another kind (rule 9). */
  reach(stepId: string, kind: StepKind): Reached;
  /** Whether the claim's ledger holds a row of `stepId` (any status), reached or not. */
  inLedger(stepId: string): boolean;
  /**
   * The answer of a receipt: its result (one left out of the claim is read from the store), or its
   * recorded error thrown again. Undefined: the step has no outcome yet.
   */
  answer(recorded: StepRecord | undefined): Promise<any> | undefined;
  /** A recorded error as the body sees it; noted, so advance.ts knows a body that throws it out. */
  revive(error: StoredError | null): Error;
  /** Notes `error` as one thrown from a failed receipt (the body's end may carry it), and returns it. */
  noteRecordedFailure<E extends Error>(error: E): E;
  /** Whether `error` was thrown from a failed receipt. */
  isRecordedFailure(error: unknown): boolean;
  /**
   * Writes an outcome under the fence, after the chunks of the step's stream. Null: nothing was
   * written and the execution is stopping; `onRefused` is told when the fence refused it. `tx`:
   * the transaction of a `tx` step, whose receipt commits with its effect.
   */
  write(outcome: StepOutcome, tx?: Executor, onRefused?: () => void): Promise<Written | null>;
  /**
   * Holds back a completed step's receipt when no other step is in flight: it is written before
   * the next step starts or rides on the run's final write (docs/decisions.md, "Held-back
   * receipts"). Otherwise writes it now. `inAttempt`: the caller runs in its own `attempt`.
   */
  holdBack(outcome: StepOutcome, inAttempt: boolean): true | Promise<Written | true | null>;
  /** Runs `work` as in flight: a stop waits for it to record before the run is parked. */
  track<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Runs `work` inside its `durable.step` span (engine/run/tracing.ts); `end` names the outcome it
   * came to (null: the stop cut it short). `tracked`: in flight too, inside the span.
   */
  trace<T>(
    step: StepSpanInfo,
    work: () => Promise<T>,
    end: (value: T) => StepSpanEnd | null,
    tracked?: boolean,
  ): Promise<T>;
  /**
   * One executed attempt of an effect step: in flight, in its span, and (but for `tx`) with its
   * stream open for `ctx.stream`; the stream's chunks are stored before its receipt.
   */
  attempt<T>(step: StepSpanInfo, work: () => Promise<T>, end: (value: T) => StepSpanEnd | null): Promise<T>;
  /** Ends the stream of an attempt that threw: its chunks are stored for the record, failing quietly. */
  endStream(stepId: string): Promise<void>;
  /** Whether a step whose body may take `leaseMs` can start now (docs/rules.md, rule 11). */
  fits(leaseMs: number): Room;
  /** Why a step whose lease never fits fails: the step, its lease and the budget, named. */
  neverFits(stepId: string, leaseMs: number): Error;
  /** Whether a wait of `ms` (then a body of `leaseMs`) happens in this process rather than by parking. */
  waitsHere(ms: number, leaseMs?: number): boolean;
  /** Stops the execution; what the step that asked returns from then on: a promise that never settles. */
  stop<T = never>(stop: Stop): Promise<T>;
  /** The database clock now, estimated from the claim's reading. */
  now(): Date;
  /** The stream writer of a step attempt in flight (`ctx.stream`). */
  stream(stepId: string): StreamWriter;
  /** The events of `name` stored since `since` and before `until`, oldest first, their data opened. */
  readEvents(name: string, since: string, until: Date | null): Promise<{ id: string; data: unknown }[]>;
  /** Takes the oldest loaded delivery of signal `name` no wait of this execution took (rule 16). */
  takeDelivery(name: string): { payload: unknown; seq: number } | undefined;
  /**
   * Confirms the claim (`s.heartbeat()`, docs/rules.md, rule 11a), on `on` when given (a foreign
   * transaction): "owned", or null when that database has no such run. A claim that is gone
   * stops the execution as a lost owner, and the heartbeat rejects with StepLeaseLostError.
   */
  heartbeat(stepId: string, on?: Executor): Promise<"owned" | null>;
  /** Runs `work` in a transaction `runner` opens on the store's own database (a `tx` step). */
  transaction<H, R>(runner: TxOpener<H>, work: (store: Executor, handle: H) => Promise<R>): Promise<R>;
  /** Cancels child run `childId` (a timed-out invoke), in flight. */
  cancelChild(childId: string, reason: string): Promise<void>;
  /** Notes an event of step `stepId` on the run (a rolled-back `tx` receipt's refusal or conflict). */
  note(stepId: string, event: { kind: string; data: Record<string, unknown> }): Promise<void>;
}
