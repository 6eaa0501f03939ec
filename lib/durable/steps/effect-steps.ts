import type { Transaction } from "kysely";
import { MAX_TIMER_MS, startTimer, toBoundedMs } from "../duration";
import {
  FatalStepError,
  InvalidInputError,
  ResultTooLargeError,
  RetryableStepError,
  serializeError,
  StepLeaseLostError,
  StepNotReplaySafeError,
  StepTimeoutError,
} from "../errors";
import { type Execution, never, type StepMock } from "../engine/run/execution";
import { failpoint } from "../engine/run/failpoints";
import type { StepRecorder } from "../engine/run/step-recorder";
import { heartbeatRun, type RecordResult, type StepRecord } from "../store";
import type { StepInfo, StepOptions } from "../types";
import { type Body, type BodyResult, type EffectKind, Rollback } from "./effect-body";
import { externalKeyFor } from "./external-key";
import { stopAsLostOwner } from "./lost-claim";
import { pause } from "./pause";
import { canRetry, type RetryPolicy, resolveRetryPolicy, retryDelayMs } from "./retry-policy";
import { kyselyTxRunner, type TxRunner, txBody } from "./tx-step";

export type { Body, BodyResult, EffectKind };

type AttemptOutcome =
  | { kind: "value"; value: unknown }
  | { kind: "failed"; error: Error }
  | { kind: "retry"; delayMs: number; error: unknown }
  | { kind: "stopped" };

/** One attempt of an effect step: what it runs, under which id, key and policy. */
interface Attempt {
  id: string;
  kind: EffectKind;
  seq: number;
  attempt: number;
  externalKey: string;
  isReclaim: boolean;
  body: Body;
  options: StepOptions;
  policy: RetryPolicy;
}

/**
 * `run` and `tx`: steps with an effect, executed under the budget with retries, leases,
 * heartbeats, timeouts and the reclaim rules (docs/rules.md, rules 6, 7a, 11, 14).
 */
export function createEffectSteps(exec: Execution, recorder: StepRecorder) {
  return {
    /** Runs `body` as a step of `kind` with the effect-step rules; for step kinds built on them. */
    execute: (id: string, kind: EffectKind, body: Body, options?: StepOptions): Promise<any> =>
      executeEffect(exec, recorder, id, kind, body, options),
    run: <T>(id: string, fn: (s: StepInfo) => T | Promise<T>, options?: StepOptions) =>
      executeEffect(exec, recorder, id, "run", runBody(recorder, id, fn), options),
    tx: <T>(id: string, fn: (tx: Transaction<any>, s: StepInfo) => Promise<T>, options?: StepOptions) =>
      executeEffect(exec, recorder, id, "tx", txBody(exec, recorder, id, kyselyTxRunner, fn), options),
    /** A `tx` step whose transaction `runner` opens (lib/durable/drizzle.ts). */
    txWith: <T, H>(id: string, runner: TxRunner<H>, fn: (tx: H, s: StepInfo) => Promise<T>, options?: StepOptions) =>
      executeEffect(exec, recorder, id, "tx", txBody(exec, recorder, id, runner, fn), options),
  };
}

/** A step of `kind`: its receipt's answer, or attempts under its policy until one settles. */
async function executeEffect(
  exec: Execution,
  recorder: StepRecorder,
  id: string,
  kind: EffectKind,
  body: Body,
  options: StepOptions = {},
): Promise<any> {
  const { seq, recorded, isReclaim } = exec.reach(id, kind);
  const known = recorder.answer(recorded);
  if (known.done) return known.value;
  const policy = resolveRetryPolicy(options);
  const leaseMs = toBoundedMs(options.lease ?? exec.settings.leaseMs, "lease");
  if (options.heartbeat !== undefined && toBoundedMs(options.heartbeat, "heartbeat") >= leaseMs) {
    throw new InvalidInputError(`step "${id}": heartbeat must be shorter than the lease (${leaseMs} ms)`);
  }
  const externalKey = externalKeyFor(exec.runId, id);
  const attempt = exec.priorAttempts(recorded, isReclaim) + 1;
  if (!exec.everFits(leaseMs))
    return failNeverFits(exec, recorder, { id, kind, seq, attempt, externalKey, isReclaim }, leaseMs);
  // Only the first attempt of this execution may be one a lost owner also ran (rule 7a).
  const current: Attempt = { id, kind, seq, attempt, externalKey, isReclaim, body, options, policy };
  let dueAt = recorded?.status === "waiting" ? recorded.wakeAt : null;
  for (;;) {
    if (exec.isStopping) return never();
    const delay = dueAt ? dueAt.getTime() - exec.dbNow().getTime() : 0;
    if (delay > 0) {
      if (!exec.waitsInProcess(delay, leaseMs)) {
        return exec.stop({ kind: "suspend", waits: [{ step_id: id }], waitingFor: { kind: "retry", name: id } });
      }
      await exec.track(() => pause(delay, exec.abort.signal));
      if (exec.isStopping) return never();
    }
    if (!exec.fits(leaseMs)) return exec.stop({ kind: "yield", stepId: id });
    const outcome = await traceAttempt(exec, recorder, current);
    if (outcome.kind === "stopped") return never();
    if (outcome.kind === "value") return outcome.value;
    if (outcome.kind === "failed") throw outcome.error;
    dueAt = new Date(exec.dbNow().getTime() + outcome.delayMs);
    current.attempt++;
    current.isReclaim = false;
  }
}

/** A step whose lease no invocation can fit: giving the run back would only bring it here again. */
async function failNeverFits(
  exec: Execution,
  recorder: StepRecorder,
  step: Pick<Attempt, "id" | "kind" | "seq" | "attempt" | "externalKey" | "isReclaim">,
  leaseMs: number,
): Promise<never> {
  const { id, kind, seq, attempt, externalKey, isReclaim } = step;
  // Fail the step, clearly, at once.
  const error = serializeError(exec.leaseNeverFits(id, leaseMs));
  const written = await exec.track(() =>
    recorder.traced(
      { stepId: id, kind, attempt, isReclaim },
      () => recorder.write({ stepId: id, seq, kind, attempt, externalKey, status: "failed", error }),
      (receipt) => (receipt ? { outcome: "failed", error: recorder.revive(error) } : null),
    ),
  );
  if (!written) return never();
  throw recorder.revive(error);
}

/**
 * One `durable.step` span per attempt (engine/run/tracing.ts), inside the tracked work, so it ends
 * with the attempt's own outcome before a stop waiting for it settles.
 */
function traceAttempt(exec: Execution, recorder: StepRecorder, a: Attempt): Promise<AttemptOutcome> {
  return exec.track(() =>
    recorder.traced(
      { stepId: a.id, kind: a.kind, attempt: a.attempt, isReclaim: a.isReclaim },
      () => attemptOnce(exec, recorder, { ...a }),
      (ended) =>
        ended.kind === "value"
          ? { outcome: "completed" }
          : ended.kind === "failed"
            ? { outcome: "failed", error: ended.error }
            : ended.kind === "retry"
              ? { outcome: "retry", error: ended.error }
              : null,
    ),
  );
}

/** The timers of one attempt: its timeout, its heartbeats, and the StepInfo its body is given. */
function armAttempt(exec: Execution, recorder: StepRecorder, a: Attempt) {
  const { id, options } = a;
  const stepAbort = new AbortController();
  const timeoutMs = options.timeout === undefined ? null : toBoundedMs(options.timeout, "timeout");
  const timer =
    timeoutMs === null
      ? null
      : startTimer(
          () => stepAbort.abort(new StepTimeoutError(`step "${id}" timed out after ${timeoutMs} ms`)),
          timeoutMs,
        );
  const heartbeat = () => beat(exec, recorder, id);
  const beatMs = options.heartbeat === undefined ? null : toBoundedMs(options.heartbeat, "heartbeat");
  // Past Node's timer limit an interval would fire every millisecond: beat at the limit instead,
  // which is still more often than the lease needs (docs/rules.md, rule 19).
  const every = beatMs === null ? null : Math.min(beatMs, MAX_TIMER_MS);
  const beating = every === null ? null : setInterval(() => heartbeat().catch((e) => stepAbort.abort(e)), every);
  let abortSignal: AbortSignal | null = null;
  const info: StepInfo = {
    stepId: id,
    externalKey: a.externalKey,
    attempt: a.attempt,
    isReclaim: a.isReclaim,
    heartbeat,
    // Made when a body first reads it: most bodies never do, and AbortSignal.any costs as much
    // as the rest of a step's bookkeeping.
    get abortSignal() {
      abortSignal ??= AbortSignal.any([exec.abort.signal, stepAbort.signal]);
      return abortSignal;
    },
  };
  const disarm = () => {
    timer?.clear();
    if (beating) clearInterval(beating);
  };
  return { info, stepAbort, timeoutMs, disarm };
}

/** Runs the body once (or its mock) and records what it did: a receipt, a retry, or a failure. */
async function attemptOnce(exec: Execution, recorder: StepRecorder, a: Attempt): Promise<AttemptOutcome> {
  const { id, kind, seq, attempt, externalKey } = a;
  const base = { stepId: id, seq, kind, attempt, externalKey } as const;
  if (a.isReclaim && a.options.onReclaim === "fail") {
    const error = new StepNotReplaySafeError(id, exec.claim.run.lostLeaseUntil, externalKey);
    const written = await recorder.write({ ...base, status: "failed", error: serializeError(error) });
    return written ? { kind: "failed", error: recorder.revive(serializeError(error)) } : { kind: "stopped" };
  }
  const started = performance.now();
  const armed = armAttempt(exec, recorder, a);
  // A tx body runs inside its transaction: on PGlite's one connection a stream append would
  // wait for it, so streams are for `run` and AI steps.
  if (kind !== "tx") exec.streams.begin(id, attempt);
  try {
    // A mocked step (testing only) does not run its body; its outcome goes the body's way from here.
    const mock = exec.settings.mockStep?.(exec.runId, id);
    const { json, receipt } = mock ? mockedBody(recorder, id, mock, armed.timeoutMs) : await a.body(armed.info, seq);
    // The attempt's chunks are stored before its receipt: a reader never sees a step done
    // before its stream.
    await exec.streams.end(id);
    const outcome = {
      ...base,
      status: "completed",
      resultJson: json,
      elapsedMs: performance.now() - started,
    } as const;
    // A run step alone in flight holds its receipt back: it rides on the next write.
    if (!receipt && recorder.holdBack(outcome, exec.inFlight > 1)) {
      await failpoint("run.after-receipt");
      return { kind: "value", value: JSON.parse(json) };
    }
    const written = receipt ?? (await recorder.write(outcome));
    if (!written) return { kind: "stopped" };
    await failpoint(kind === "tx" ? "tx.after-commit" : "run.after-receipt");
    return written.conflict ? fromRecorded(recorder, written.recorded) : { kind: "value", value: JSON.parse(json) };
  } catch (thrown) {
    await exec.streams.end(id).catch(() => {}); // what the failed attempt wrote, for the record
    return await recordThrown(exec, recorder, a, thrown, armed.stepAbort.signal, performance.now() - started);
  } finally {
    armed.disarm();
  }
}

/** What an attempt that threw records: nothing (stopped), a retry under the policy, or a failure. */
async function recordThrown(
  exec: Execution,
  recorder: StepRecorder,
  a: Attempt,
  thrown: unknown,
  stepSignal: AbortSignal,
  elapsedMs: number,
): Promise<AttemptOutcome> {
  if (thrown instanceof Rollback) {
    if (!thrown.result?.owned) return { kind: "stopped" };
    return fromRecorded(recorder, (thrown.result as Extract<RecordResult, { conflict: true }>).recorded);
  }
  if (exec.isStopping && exec.stopReason?.kind !== "suspend" && exec.stopReason?.kind !== "yield")
    return { kind: "stopped" };
  const base = { stepId: a.id, seq: a.seq, kind: a.kind, attempt: a.attempt, externalKey: a.externalKey } as const;
  const reason = stepSignal.reason;
  const error = stepSignal.aborted && StepTimeoutError.is(reason) ? reason : thrown;
  const fatal = FatalStepError.is(error) || ResultTooLargeError.is(error) || InvalidInputError.is(error);
  if (!fatal && canRetry(a.policy, a.attempt)) {
    const retryAfter =
      RetryableStepError.is(error) && error.retryAfter !== undefined
        ? toBoundedMs(error.retryAfter, "retryAfter")
        : null;
    const delayMs = retryAfter ?? retryDelayMs(a.policy, a.attempt);
    const written = await recorder.write({
      ...base,
      status: "waiting",
      error: serializeError(error),
      elapsedMs,
      wakeInMs: delayMs,
    });
    return written ? { kind: "retry", delayMs, error } : { kind: "stopped" };
  }
  const stored = serializeError(error);
  const written = await recorder.write({ ...base, status: "failed", error: stored, elapsedMs });
  return written ? { kind: "failed", error: recorder.revive(stored) } : { kind: "stopped" };
}

/** s.heartbeat(): confirms the fence; once superseded, stops the execution and rejects. */
async function beat(exec: Execution, recorder: StepRecorder, id: string): Promise<void> {
  if (exec.stopReason?.kind === "lost") throw new StepLeaseLostError(`step "${id}": ${exec.stopReason.reason}`);
  // Past the invocation's deadline the lease may be gone already: never answer "owned" then.
  const state = exec.remainingMs() <= 0 ? "expired" : await heartbeatRun(exec.db, exec.runId, exec.fence);
  if (state !== "owned") throw new StepLeaseLostError(`step "${id}": ${stopAsLostOwner(exec, recorder, id, state)}`);
}

/**
 * A mocked attempt (lib/durable/testing.ts, `mockStep`): the result's JSON, as a body's would be
 * recorded (a mocked `tx` step too: no transaction, its receipt written as a `run` step's), or the
 * error the body would have thrown, so retries, their delays and fatal errors apply as usual.
 */
function mockedBody(recorder: StepRecorder, id: string, mock: StepMock, timeoutMs: number | null): BodyResult {
  if ("result" in mock) return { json: recorder.json(mock.result, id) };
  if ("error" in mock) throw typeof mock.error === "string" ? new Error(mock.error) : mock.error;
  throw new StepTimeoutError(`step "${id}" timed out after ${timeoutMs ?? 0} ms (mocked)`);
}

function fromRecorded(recorder: StepRecorder, recorded: StepRecord): AttemptOutcome {
  if (recorded.status === "failed") return { kind: "failed", error: recorder.revive(recorded.error) };
  return { kind: "value", value: recorded.result };
}

/** A `run` step's body: the function, between its failpoints, and its result's JSON. */
function runBody<T>(recorder: StepRecorder, id: string, fn: (s: StepInfo) => T | Promise<T>): Body {
  return async (s) => {
    await failpoint("run.before-body");
    const value = await fn(s);
    await failpoint("run.after-body");
    return { json: recorder.json(value, id) };
  };
}
