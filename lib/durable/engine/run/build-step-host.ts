import { StepLeaseLostError } from "../../errors";
import {
  cancelRun,
  type DurableDb,
  type Executor,
  heartbeatRun,
  insertEvent,
  readAppEvents,
  type StepOutcome,
  type StepRecord,
} from "../../store";
import type { StepKind, StoredError } from "../../types";
import { type Execution, PAST_RUN_DEADLINE, type Stop } from "./execution";
import { failpoint, failpointArmed } from "./failpoints";
import type { StepHost, StepSettings, TxOpener, Written } from "./step-host";
import type { StepRecorder } from "./step-recorder";
import { type StepSpanEnd, type StepSpanInfo, withStepSpan } from "./tracing";

/**
 * Builds the step host of one pass (engine/run/step-host.ts): once, by advance.ts, over the
 * execution and the recorder its final write shares. Each verb is one call into them; the object
 * keeps no state of its own.
 */
export function buildStepHost(exec: Execution, recorder: StepRecorder): StepHost {
  return new ExecutionHost(exec, recorder);
}

class ExecutionHost implements StepHost {
  readonly runId: string;
  readonly signal: AbortSignal;
  readonly settings: StepSettings;
  readonly lostLeaseUntil: Date | null;
  readonly storeKey: object;
  readonly mock: StepHost["mock"];
  readonly failpoint: StepHost["failpoint"];
  readonly compose: StepHost["compose"];
  readonly callbacks: StepHost["callbacks"];
  readonly claimTime: string;

  constructor(
    private readonly exec: Execution,
    private readonly recorder: StepRecorder,
  ) {
    const { settings } = exec;
    const { mockStep } = settings;
    this.runId = exec.runId;
    this.signal = exec.abort.signal;
    this.settings = {
      leaseMs: settings.leaseMs,
      maxResultBytes: settings.maxResultBytes,
      skipSleeps: settings.skipSleeps === true,
      log: settings.log,
      seals: settings.codec.seals,
    };
    this.lostLeaseUntil = exec.claim.run.lostLeaseUntil;
    this.storeKey = exec.db;
    this.mock = mockStep && ((stepId) => mockStep(exec.runId, stepId));
    // Armed between passes (the chaos harness), never during one: off, a step reads null.
    this.failpoint = failpointArmed() ? failpoint : null;
    this.compose = settings.compose;
    this.callbacks = exec.callbacks;
    this.claimTime = exec.claim.nowText ?? exec.claim.now.toISOString();
  }

  get stopping(): boolean {
    return this.exec.isStopping;
  }

  get stopReason(): Stop | null {
    return this.exec.stopReason;
  }

  get acceptsWaits(): boolean {
    return this.exec.acceptsWaits;
  }

  flushHeld(): Promise<boolean> | null {
    return this.recorder.holding ? this.recorder.flush() : null;
  }

  reach(stepId: string, kind: StepKind) {
    return this.exec.reach(stepId, kind);
  }

  inLedger(stepId: string): boolean {
    return this.exec.inLedger(stepId);
  }

  answer(recorded: StepRecord | undefined): Promise<any> | undefined {
    const known = this.recorder.answer(recorded);
    return known.done ? known.value : undefined;
  }

  revive(error: StoredError | null): Error {
    return this.recorder.revive(error);
  }

  noteRecordedFailure<E extends Error>(error: E): E {
    return this.exec.noteRecordedFailure(error);
  }

  isRecordedFailure(error: unknown): boolean {
    return this.exec.isRecordedFailure(error);
  }

  write(outcome: StepOutcome, tx?: Executor, onRefused?: () => void) {
    return this.recorder.write(outcome, tx, onRefused);
  }

  holdBack(outcome: StepOutcome, inAttempt: boolean) {
    const { exec, recorder } = this;
    // The chunks of the step's stream are stored first, as before any receipt.
    const ending = exec.streams.end(outcome.stepId);
    const keep = (): true | Promise<Written | null> => {
      if (recorder.holdBack(outcome, exec.inFlight > (inAttempt ? 1 : 0))) return true as const;
      return inAttempt ? recorder.write(outcome) : exec.track(() => recorder.write(outcome));
    };
    return ending ? ending.then<Written | true | null>(keep) : keep();
  }

  track<T>(work: () => Promise<T>): Promise<T> {
    return this.exec.track(work);
  }

  trace<T>(step: StepSpanInfo, work: () => Promise<T>, end: (value: T) => StepSpanEnd | null, tracked = false) {
    const { exec } = this;
    return tracked ? exec.track(() => withStepSpan(exec, step, work, end)) : withStepSpan(exec, step, work, end);
  }

  attempt<T>(step: StepSpanInfo, work: () => Promise<T>, end: (value: T) => StepSpanEnd | null): Promise<T> {
    const { exec } = this;
    // A tx body runs inside its transaction: on PGlite's one connection a stream append would
    // wait for it, so streams are for `run` and AI steps.
    if (step.kind !== "tx") exec.streams.begin(step.stepId, step.attempt);
    return exec.track(() => withStepSpan(exec, step, work, end));
  }

  async endStream(stepId: string): Promise<void> {
    await this.exec.streams.end(stepId)?.catch(() => {});
  }

  fits(leaseMs: number) {
    const { exec } = this;
    if (exec.isStopping) return "stopping" as const;
    if (!exec.everFits(leaseMs)) return "never" as const;
    return exec.fits(leaseMs) ? ("fits" as const) : ("later" as const);
  }

  neverFits(stepId: string, leaseMs: number): Error {
    return this.exec.leaseNeverFits(stepId, leaseMs);
  }

  waitsHere(ms: number, leaseMs?: number): boolean {
    return this.exec.waitsInProcess(ms, leaseMs);
  }

  stop<T = never>(stop: Stop): Promise<T> {
    return this.exec.stop<T>(stop);
  }

  now(): Date {
    return this.exec.dbNow();
  }

  stream(stepId: string) {
    return this.exec.streams.writer(stepId);
  }

  async readEvents(name: string, since: string, until: Date | null) {
    const { exec } = this;
    const events = await readAppEvents(exec.db, name, since, until);
    return Promise.all(
      events.map(async (event) => ({ id: event.id, data: await exec.settings.codec.open(event.data) })),
    );
  }

  takeDelivery(name: string) {
    return this.exec.takeDelivery(name);
  }

  async heartbeat(stepId: string, on?: Executor): Promise<"owned" | null> {
    const { exec } = this;
    if (on) {
      // A foreign transaction's first look at the run: null, when its database has none.
      const found = await heartbeatRun(on as DurableDb, exec.runId, exec.fence);
      if (found === "owned" || found === null) return found;
      throw new StepLeaseLostError(`step "${stepId}": ${stopAsLostOwner(exec, this.recorder, stepId, found)}`);
    }
    const stop = exec.stopReason;
    if (stop?.kind === "lost") throw new StepLeaseLostError(`step "${stepId}": ${stop.reason}`);
    // Past the invocation's deadline the lease may be gone already: never answer "owned" then.
    const state = exec.remainingMs() <= 0 ? "expired" : await heartbeatRun(exec.db, exec.runId, exec.fence);
    if (state === "owned") return state;
    throw new StepLeaseLostError(`step "${stepId}": ${stopAsLostOwner(exec, this.recorder, stepId, state)}`);
  }

  transaction<H, R>(runner: TxOpener<H>, work: (store: Executor, handle: H) => Promise<R>): Promise<R> {
    return runner.open(this.exec.db, work, this.exec.remainingMs());
  }

  async cancelChild(childId: string, reason: string): Promise<void> {
    const { exec } = this;
    await exec.track(() => cancelRun(exec.db, childId, reason, "cancel"));
  }

  async note(stepId: string, event: { kind: string; data: Record<string, unknown> }): Promise<void> {
    const { exec } = this;
    await insertEvent(exec.db, { runId: exec.runId, stepId, fence: exec.fence, ...event });
  }
}

/**
 * What a heartbeat that did not answer "owned" means (docs/rules.md, rule 11a): the claim is gone,
 * so the refusal is noted, the execution stops as a lost owner and writes nothing more. Answers
 * the reason it gave.
 */
function stopAsLostOwner(exec: Execution, recorder: StepRecorder, id: string, state: string | null): string {
  if (state === "deadline") {
    // Past the run's deadline: nothing more is written, and the run is ended as deadline_exceeded.
    recorder.noteFenceRejected(id, "heartbeat", PAST_RUN_DEADLINE);
    exec.requestStop({ kind: "abandon", reason: PAST_RUN_DEADLINE });
    return PAST_RUN_DEADLINE;
  }
  const reason = state === "cancelled" ? "cancelled" : state === "expired" ? "lease expired" : "lease lost";
  recorder.noteFenceRejected(id, "heartbeat", reason);
  exec.requestStop({ kind: "lost", reason });
  return reason;
}
