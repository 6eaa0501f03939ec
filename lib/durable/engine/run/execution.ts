import type { PayloadCodec } from "../../encryption/payload-codec";
import type { z } from "zod";
import { startTimer, type Timer } from "../../duration";
import { DuplicateStepIdError, InvalidInputError, StepKindMismatchError } from "../../errors";
import { storableName } from "../../names";
import { never } from "../../steps/never";
import type { ClaimedRun, DurableDb, MailboxEntry, StepRecord } from "../../store";
import type { StepKind } from "../../types";
import type { ComposeSupport } from "../compose-support";
import { RunMetadata } from "./run-metadata";
import { RunStreams } from "./run-streams";
import type { Reached, StepMock, Stop } from "./step-host";

export type { StepMock, Stop };

export interface ExecutionSettings {
  db: DurableDb;
  /** Safety margin kept free before the deadline (ms). */
  marginMs: number;
  /** Default step lease (ms). */
  leaseMs: number;
  /** The instance's default invocation budget (ms): what a fresh invocation is given at least. */
  budgetMs: number;
  maxResultBytes: number;
  /** Waits up to this long (sleep, poll interval, retry delay) happen in process when they fit. */
  inProcessWaitMs: number;
  log: (message: string) => void;
  /**
   * Testing only (an instance made with `testing: true`): `sleep` and `sleepUntil` complete at once,
   * recorded as completed sleeps, instead of waiting or parking the run. Other waits are unchanged.
   */
  skipSleeps?: boolean;
  /**
   * Testing only: the mock of a `run`, `tx` or AI step, consulted before each attempt where the body
   * would run; undefined runs the body (lib/durable/testing.ts, `mockStep`).
   */
  mockStep?: StepMockLookup;
  /**
   * Testing only: asked as each step is reached, with the body's position (0 at each pass's
   * start); an error it answers fails the run at that step, before anything of the step runs
   * (replayTest, engine/replay-check.ts).
   */
  observeStep?: StepObserver;
  /** Child runs, status and callback tokens for the composition steps (engine/compose-support.ts). */
  compose?: ComposeSupport;
  /** Seals payloads as they are written and opens them as they are read (encryption/payload-codec.ts). */
  codec: PayloadCodec;
}

/** Sees a step reached (testing only): an Error to fail the run there, else undefined. */
export type StepObserver = (runId: string, stepId: string, kind: StepKind, position: number) => Error | undefined;

/** Finds the mock of a step of a run, if any. */
export type StepMockLookup = (runId: string, stepId: string) => StepMock | undefined;

/** The abandon reason of an execution whose run reached its deadline: the run is ended, not left. */
export const PAST_RUN_DEADLINE = "the run passed its deadline";

/**
 * The state of one claimed run during one invocation: which steps this execution reached and in
 * what order, what the ledger already answers, which steps are in flight, the budget, and why it
 * stops. The step API (steps/step-api.ts) drives it; advance.ts waits on `stopped`.
 */
export class Execution {
  readonly abort = new AbortController();
  readonly runId: string;
  readonly fence: number;
  /** The run's stream writers of the step attempts in flight (`ctx.stream`). */
  readonly streams: RunStreams;
  /**
   * The errors this execution threw into the body from a failed receipt (recorded now or before):
   * a replay throws each again, so a body that throws one out has failed even while a sibling
   * step suspended it (engine/run/advance.ts).
   */
  private readonly recordedFailures = new WeakSet<object>();
  /** The run's metadata and ctx.setMetadata's patches not yet written (engine/run/run-metadata.ts). */
  readonly metadata: RunMetadata;
  /** The callbacks this execution reached (`ctx.step.callback`), by callback id, with their schemas. */
  readonly callbacks = new Map<string, z.ZodType | undefined>();
  private readonly ledger: Map<string, StepRecord>;
  private readonly reached = new Set<string>();
  private nextSeq = 0;
  private readonly claimedAt = performance.now();
  private inflight = 0;
  private stopAsked: Stop | null = null;
  private wroteReceipt = false;
  private readonly mailbox: MailboxEntry[];
  private resolveStopped!: (stop: Stop) => void;
  private readonly deadlineTimer: Timer | null = null;
  /** Settles once a stop was asked for and every step in flight has recorded (or been dropped). */
  readonly stopped = new Promise<Stop>((resolve) => (this.resolveStopped = resolve));

  constructor(
    readonly settings: ExecutionSettings,
    readonly claim: ClaimedRun,
    /** The invocation's deadline on the monotonic clock (performance.now()). */
    readonly deadline: number,
    /** The whole budget the invocation was given (ms), not what is left of it. */
    readonly budgetMs: number,
    /** Once aborted, no further step starts: the run is given back at its next step (a worker stopping). */
    private readonly release?: AbortSignal,
  ) {
    this.runId = claim.run.id;
    this.fence = claim.run.fence;
    this.metadata = new RunMetadata();
    this.ledger = new Map(claim.steps.map((step) => [step.stepId, step]));
    this.mailbox = [...claim.mailbox];
    this.streams = new RunStreams({
      db: settings.db,
      runId: this.runId,
      fence: this.fence,
      codec: settings.codec,
      onLost: (reason) => this.requestStop({ kind: "lost", reason }),
      log: settings.log,
    });
    // At the run's deadline (docs/guide/composition.md, "Deadlines") the step in flight aborts and
    // nothing more is written; the database refuses a later write all the same.
    const { deadlineAt } = claim.run;
    if (deadlineAt) {
      const ms = Math.max(0, deadlineAt.getTime() - claim.now.getTime());
      // startTimer: a deadline weeks away would fire a plain setTimeout at once (rule 19).
      this.deadlineTimer = startTimer(() => this.requestStop({ kind: "abandon", reason: PAST_RUN_DEADLINE }), ms);
      this.deadlineTimer.unref();
    }
  }

  /** Notes `error` as thrown from a failed receipt, and returns it. */
  noteRecordedFailure<E extends Error>(error: E): E {
    this.recordedFailures.add(error);
    return error;
  }

  isRecordedFailure(error: unknown): boolean {
    return typeof error === "object" && error !== null && this.recordedFailures.has(error);
  }

  /** Ends what the execution keeps running once its pass is over (the deadline's timer). */
  dispose(): void {
    this.deadlineTimer?.clear();
  }

  get db(): DurableDb {
    return this.settings.db;
  }

  get isStopping(): boolean {
    return this.stopAsked !== null;
  }

  get stopReason(): Stop | null {
    return this.stopAsked;
  }

  /**
   * Whether a wait reached now may still join the stop: before any stop, or while the stop is a
   * suspension (the waits of a `Promise.all` of invokes or races add up to one suspension).
   */
  get acceptsWaits(): boolean {
    return this.stopAsked === null || this.stopAsked.kind === "suspend";
  }

  /** Whether a wait of `ms` should happen in this process rather than by parking the run. */
  waitsInProcess(ms: number, leaseMs = 0): boolean {
    return ms <= this.settings.inProcessWaitMs && this.fits(ms + leaseMs);
  }

  /** The database clock now, estimated from the claim's reading plus monotonic time since. */
  dbNow(): Date {
    return new Date(this.claim.now.getTime() + (performance.now() - this.claimedAt));
  }

  remainingMs(): number {
    return this.deadline - performance.now();
  }

  /** Whether a step whose body may take `leaseMs` can start and still record before the deadline. */
  fits(leaseMs: number): boolean {
    if (this.release?.aborted) return false;
    return leaseMs + this.settings.marginMs <= this.remainingMs();
  }

  /**
   * Whether a step whose body may take `leaseMs` fits in any invocation at all: in the budget of
   * this one from its start, or in the instance's default budget. A step that fits neither would
   * be given back and claimed again for ever, so it fails at once (docs/rules.md, rule 11).
   */
  everFits(leaseMs: number): boolean {
    return leaseMs + this.settings.marginMs <= Math.max(this.budgetMs, this.settings.budgetMs);
  }

  /** Why a step whose lease never fits fails: the step, its lease and the budget, named. */
  leaseNeverFits(stepId: string, leaseMs: number): InvalidInputError {
    const budget = Math.max(this.budgetMs, this.settings.budgetMs);
    return new InvalidInputError(
      `step "${stepId}" has a lease of ${leaseMs} ms: with the ${this.settings.marginMs} ms margin it can never ` +
        `fit an invocation's budget of ${budget} ms, so it would be given back for ever; lower its lease or ` +
        "raise maxDuration (and the budget that follows it)",
    );
  }

  /**
   * Takes the oldest delivery of signal `name` that the claim loaded and no wait of this execution
   * took yet (docs/rules.md, rule 16). Undefined when none is loaded, or when the oldest one's
   * payload was too large to load: the wait then parks, and the claim that wakes it takes it.
   */
  takeDelivery(name: string): MailboxEntry | undefined {
    const index = this.mailbox.findIndex((entry) => entry.name === name);
    const entry = this.mailbox[index];
    if (!entry || entry.omitted) return undefined;
    this.mailbox.splice(index, 1);
    return entry;
  }

  /**
   * Marks `stepId` as reached by this execution: refuses a second use of the id (docs/rules.md,
   * rule 9), checks the kind against the ledger, and tells whether an earlier, lost execution may
   * have run it (rule 7a: the run lost a claim and this execution has not yet written a receipt),
   * and which attempt an execution of it now would be.
   */
  reach(stepId: string, kind: StepKind): Reached {
    try {
      storableName(stepId, "step id");
    } catch (error) {
      throw this.failWith(error as Error);
    }
    if (this.reached.has(stepId)) throw this.failWith(new DuplicateStepIdError(stepId));
    const refused = this.settings.observeStep?.(this.runId, stepId, kind, this.nextSeq);
    if (refused) throw this.failWith(refused);
    this.reached.add(stepId);
    const seq = this.nextSeq++;
    const recorded = this.ledger.get(stepId);
    if (recorded && recorded.kind !== kind) {
      throw this.failWith(new StepKindMismatchError(stepId, recorded.kind, kind));
    }
    if (recorded && recorded.seq !== seq && recorded.status === "completed") {
      this.settings.log(
        `step "${stepId}" replayed at position ${seq}, recorded at ${recorded.seq}: is the workflow deterministic?`,
      );
    }
    const lostClaims = this.claim.run.lostClaims;
    const isReclaim = lostClaims > 0 && !this.wroteReceipt;
    // How many executions of the step may have happened before this one: never fewer (rule 7a).
    const attempt = (recorded?.attempt ?? 0) + (isReclaim ? lostClaims : 0) + 1;
    return { seq, recorded, isReclaim, attempt };
  }

  /** Whether the claim's ledger holds a row of `stepId` (any status), reached or not. */
  inLedger(stepId: string): boolean {
    return this.ledger.has(stepId);
  }

  /** The body's position: how many steps (patch markers included) this execution has reached. */
  get position(): number {
    return this.nextSeq;
  }

  /**
   * Whether the ledger holds a row at or beyond position `seq` that this execution has not
   * reached: the code that wrote the run went on past this point (`ctx.patched`, engine/run/patches.ts).
   */
  hasReceiptsFrom(seq: number): boolean {
    for (const step of this.ledger.values()) {
      if (step.seq >= seq && !this.reached.has(step.stepId)) return true;
    }
    return false;
  }

  /** Receipts of the ledger that this execution never reached (docs/rules.md, rule 13). */
  unreachedSteps(): string[] {
    return [...this.ledger.keys()].filter((id) => !this.reached.has(id));
  }

  /** Steps whose work is in flight now. */
  get inFlight(): number {
    return this.inflight;
  }

  noteReceiptWritten(): void {
    this.wroteReceipt = true;
  }

  /**
   * Runs a step's work as "in flight": a stop waits for it to record before the run is parked.
   * Returns what `work` returns, or never settles when the execution stopped meanwhile.
   */
  async track<T>(work: () => Promise<T>): Promise<T> {
    this.inflight++;
    let value: T;
    try {
      value = await work();
    } finally {
      this.inflight--;
      this.settleIfIdle();
    }
    return value;
  }

  /**
   * Asks the execution to stop. A lost fence or an abandon wins over everything; a failure over a
   * continuation, a continuation over a yield or a suspension (the body asked to end here); a
   * yield over a suspension (due now is always safe); the waits of parallel suspensions add up
   * (the run wakes at the earliest).
   */
  requestStop(stop: Stop): void {
    if (stop.kind === "lost" || stop.kind === "abandon") {
      if (!this.abort.signal.aborted) this.abort.abort(stop.reason);
    }
    const rank = { suspend: 0, yield: 1, continue: 2, fail: 3, abandon: 4, lost: 5 } as const;
    if (this.stopAsked?.kind === "suspend" && stop.kind === "suspend") {
      this.stopAsked = { ...this.stopAsked, waits: [...this.stopAsked.waits, ...stop.waits] };
    } else if (this.stopAsked === null || rank[stop.kind] > rank[this.stopAsked.kind]) {
      this.stopAsked = stop;
    }
    // Nothing more will be written: do not wait for in-flight steps.
    if (stop.kind === "lost" || stop.kind === "abandon") this.resolveStopped(this.stopAsked);
    else this.settleIfIdle();
  }

  /**
   * Stops the execution for `stop` and answers what the step that asked returns from then on: a
   * promise that never settles, because a suspended body is abandoned, not run on (docs/model.md,
   * "Suspension").
   */
  stop<T = never>(stop: Stop): Promise<T> {
    this.requestStop(stop);
    return never<T>();
  }

  private settleIfIdle(): void {
    if (this.stopAsked !== null && this.inflight === 0) this.resolveStopped(this.stopAsked);
  }

  private failWith(error: Error): Error {
    this.requestStop({ kind: "fail", error });
    return error;
  }
}
