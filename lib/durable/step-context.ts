import type { Transaction } from "kysely";
import type { z } from "zod";
import type { SignalSchemas } from "./define-workflow";
import type { Duration } from "./duration";
import { createEffectSteps } from "./effect-steps";
import { never, type Execution } from "./execution";
import type { RetryBackoff } from "./retry-policy";
import type { StepRecorder } from "./step-recorder";
import { createWaitSteps, type WaitForOptions, type WaitForSignalOptions } from "./wait-steps";

/** What a step body is told about the execution it runs in. */
export interface StepInfo {
  stepId: string;
  /** "wfe-" + 32 hex: the same for every attempt, replay and redrive; pass it as idempotency key. */
  externalKey: string;
  /** Executions of this step that may have happened, this one included (never fewer). */
  attempt: number;
  /** True when an earlier, lost execution may have run this body (DESIGN rule 7a). */
  isReclaim: boolean;
  /** Confirms the owner still holds the run; rejects with StepLeaseLostError once superseded. */
  heartbeat(): Promise<void>;
  /** Aborted on timeout, cancel or a lost claim. */
  abortSignal: AbortSignal;
}

export interface StepOptions {
  /** The longest the body may take (default "30s"); the step starts only if it fits the budget. */
  lease?: Duration;
  retries?: number;
  retryDelay?: Duration;
  retryBackoff?: RetryBackoff;
  /** Heartbeat on a timer at this interval (shorter than the lease). */
  heartbeat?: Duration;
  /** "fail": a body a lost owner may have started is not run again (StepNotReplaySafeError). */
  onReclaim?: "rerun" | "fail";
  /** Cooperative: the abortSignal fires after this long and the attempt fails with StepTimeoutError. */
  timeout?: Duration;
}

export interface StepApi {
  /** An external effect, at least once; use `s.externalKey` as the idempotency key. */
  run<T>(id: string, fn: (s: StepInfo) => T | Promise<T>, options?: StepOptions): Promise<Jsonified<T>>;
  /** A database effect: `fn`'s statements, the receipt and the fence check commit together, once. */
  tx<T, DB = any>(id: string, fn: (tx: Transaction<DB>, s: StepInfo) => Promise<T>, options?: StepOptions): Promise<Jsonified<T>>;
  /** Journals a nondeterministic value (uuid, time, random) once. */
  value<T>(id: string, fn: () => T | Promise<T>): Promise<Jsonified<T>>;
  /** Sleeps; the wake time is stored at the first call and never moves. A signal never wakes it early. */
  sleep(id: string, duration: Duration): Promise<void>;
  sleepUntil(id: string, date: Date | string): Promise<void>;
  /** Waits for the signal `name` (the step id); null when the timeout passes first. */
  waitForSignal<T = unknown>(name: string, options?: WaitForSignalOptions<T>): Promise<T | null>;
  /** Polls until ready: one receipt for the final value, however many polls. */
  waitFor<T>(id: string, options: WaitForOptions<T>): Promise<Jsonified<T>>;
}

export interface WorkflowContext<TInput = unknown, TSignals extends SignalSchemas = SignalSchemas> {
  runId: string;
  input: TInput;
  step: StepApi;
  /** Aborted when the run is cancelled or this invocation lost its claim. */
  abortSignal: AbortSignal;
  log: (...args: unknown[]) => void;
  /** @internal type carrier for signal payloads */
  readonly signals?: { [K in keyof TSignals]: z.output<TSignals[K]> };
}

/** What a value becomes after a JSON round trip, roughly: Dates to strings, BigInt to strings. */
export type Jsonified<T> = T extends Date ? string : T extends bigint ? string : T extends (infer U)[] ? Jsonified<U>[] : T extends object ? { [K in keyof T]: Jsonified<T[K]> } : T;

/** Builds `ctx.step` for one execution, over the recorder its final write shares. */
export function createStepApi(exec: Execution, recorder: StepRecorder): StepApi {
  const effects = createEffectSteps(exec, recorder);
  const waits = createWaitSteps(exec, recorder);

  // A held-back receipt is written before the next step starts, so no step (and no effect) ever
  // depends on a result that is not recorded.
  const afterFlush = <A extends unknown[], R>(step: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      recorder.holding ? recorder.flush().then((ok) => (ok ? step(...args) : never<R>())) : step(...args);

  async function value(id: string, fn: () => unknown): Promise<any> {
    const { seq, recorded } = exec.reach(id, "value");
    const known = recorder.answer(recorded);
    if (known.done) return known.value;
    if (exec.isStopping) return never();
    const text = recorder.json(await fn(), id);
    const outcome = { stepId: id, seq, kind: "value", status: "completed", attempt: 1, resultJson: text } as const;
    if (recorder.holdBack(outcome, exec.inFlight > 0)) return JSON.parse(text);
    const written = await exec.track(() => recorder.write(outcome));
    if (!written) return never();
    return written.conflict ? (written.recorded.result as any) : JSON.parse(text);
  }

  return {
    run: afterFlush(effects.run) as StepApi["run"],
    tx: afterFlush(effects.tx) as StepApi["tx"],
    value: afterFlush(value) as StepApi["value"],
    sleep: afterFlush(waits.sleep),
    sleepUntil: afterFlush(waits.sleepUntil),
    waitForSignal: afterFlush(waits.waitForSignal) as StepApi["waitForSignal"],
    waitFor: afterFlush(waits.waitFor) as StepApi["waitFor"],
  };
}
