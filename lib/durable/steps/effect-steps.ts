import type { Transaction } from "kysely";
import { MAX_TIMER_MS, startTimer, toBoundedMs } from "../duration";
import type { StepHost, StepMock } from "../engine/run/step-host";
import {
  FatalStepError,
  InvalidInputError,
  ResultTooLargeError,
  RetryableStepError,
  serializeError,
  StepNotReplaySafeError,
  StepTimeoutError,
} from "../errors";
import type { RecordResult, StepRecord } from "../store";
import type { StepInfo, StepOptions } from "../types";
import { type Body, type BodyResult, type EffectKind, Rollback, resultJson } from "./effect-body";
import { externalKeyFor } from "./external-key";
import { never } from "./never";
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
export function createEffectSteps(host: StepHost) {
  return {
    /** Runs `body` as a step of `kind` with the effect-step rules; for step kinds built on them. */
    execute: (id: string, kind: EffectKind, body: Body, options?: StepOptions): Promise<any> =>
      executeEffect(host, id, kind, body, options),
    run: <T>(id: string, fn: (s: StepInfo) => T | Promise<T>, options?: StepOptions) =>
      executeEffect(host, id, "run", runBody(host, id, fn), options),
    tx: <T>(id: string, fn: (tx: Transaction<any>, s: StepInfo) => Promise<T>, options?: StepOptions) =>
      executeEffect(host, id, "tx", txBody(host, id, kyselyTxRunner, fn), options),
    /** A `tx` step whose transaction `runner` opens (lib/durable/drizzle.ts). */
    txWith: <T, H>(id: string, runner: TxRunner<H>, fn: (tx: H, s: StepInfo) => Promise<T>, options?: StepOptions) =>
      executeEffect(host, id, "tx", txBody(host, id, runner, fn), options),
  };
}

/**
 * A step of `kind`: its receipt's answer, or attempts under its policy until one settles. A fresh
 * step calls the host four times here (reach, fits, attempt, then write or holdBack in the
 * attempt), and step-api.ts once (flushHeld): docs/layout.md, "The path of one step.run".
 */
async function executeEffect(
  host: StepHost,
  id: string,
  kind: EffectKind,
  body: Body,
  options: StepOptions = {},
): Promise<any> {
  const { seq, recorded, isReclaim, attempt } = host.reach(id, kind);
  const known = recorded && host.answer(recorded);
  if (known) return known;
  const policy = resolveRetryPolicy(options);
  const leaseMs = toBoundedMs(options.lease ?? host.settings.leaseMs, "lease");
  if (options.heartbeat !== undefined && toBoundedMs(options.heartbeat, "heartbeat") >= leaseMs) {
    throw new InvalidInputError(`step "${id}": heartbeat must be shorter than the lease (${leaseMs} ms)`);
  }
  const externalKey = externalKeyFor(host.runId, id);
  // Only the first attempt of this execution may be one a lost owner also ran (rule 7a).
  const current: Attempt = { id, kind, seq, attempt, externalKey, isReclaim, body, options, policy };
  let dueAt = recorded?.status === "waiting" ? recorded.wakeAt : null;
  let room = host.fits(leaseMs);
  for (;;) {
    if (room === "never") return failNeverFits(host, current, leaseMs);
    if (room === "stopping") return never();
    const delay = dueAt ? dueAt.getTime() - host.now().getTime() : 0;
    dueAt = null;
    if (delay > 0) {
      if (!host.waitsHere(delay, leaseMs)) {
        return host.stop({ kind: "suspend", waits: [{ step_id: id }], waitingFor: { kind: "retry", name: id } });
      }
      await host.track(() => pause(delay, host.signal));
      room = host.fits(leaseMs);
      continue;
    }
    if (room === "later") return host.stop({ kind: "yield", stepId: id });
    const outcome = await traceAttempt(host, current);
    if (outcome.kind === "stopped") return never();
    if (outcome.kind === "value") return outcome.value;
    if (outcome.kind === "failed") throw outcome.error;
    dueAt = new Date(host.now().getTime() + outcome.delayMs);
    current.attempt++;
    current.isReclaim = false;
    room = host.fits(leaseMs);
  }
}

/** A step whose lease no invocation can fit: giving the run back would only bring it here again. */
async function failNeverFits(host: StepHost, step: Attempt, leaseMs: number): Promise<never> {
  const { id, kind, seq, attempt, externalKey, isReclaim } = step;
  // Fail the step, clearly, at once.
  const error = serializeError(host.neverFits(id, leaseMs));
  const written = await host.trace(
    { stepId: id, kind, attempt, isReclaim },
    () => host.write({ stepId: id, seq, kind, attempt, externalKey, status: "failed", error }),
    (receipt) => (receipt ? { outcome: "failed", error: host.revive(error) } : null),
    true,
  );
  if (!written) return never();
  throw host.revive(error);
}

/**
 * One `durable.step` span per attempt (engine/run/tracing.ts), inside the tracked work, so it ends
 * with the attempt's own outcome before a stop waiting for it settles.
 */
function traceAttempt(host: StepHost, a: Attempt): Promise<AttemptOutcome> {
  return host.attempt(
    { stepId: a.id, kind: a.kind, attempt: a.attempt, isReclaim: a.isReclaim },
    () => attemptOnce(host, { ...a }),
    (ended) =>
      ended.kind === "value"
        ? { outcome: "completed" }
        : ended.kind === "failed"
          ? { outcome: "failed", error: ended.error }
          : ended.kind === "retry"
            ? { outcome: "retry", error: ended.error }
            : null,
  );
}

/** The timers of one attempt: its timeout, its heartbeats, and the StepInfo its body is given. */
function armAttempt(host: StepHost, a: Attempt) {
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
  const heartbeat = async (): Promise<void> => {
    await host.heartbeat(id);
  };
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
      abortSignal ??= AbortSignal.any([host.signal, stepAbort.signal]);
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
async function attemptOnce(host: StepHost, a: Attempt): Promise<AttemptOutcome> {
  const { id, kind, seq, attempt, externalKey } = a;
  const base = { stepId: id, seq, kind, attempt, externalKey } as const;
  if (a.isReclaim && a.options.onReclaim === "fail") {
    const error = new StepNotReplaySafeError(id, host.lostLeaseUntil, externalKey);
    const written = await host.write({ ...base, status: "failed", error: serializeError(error) });
    return written ? { kind: "failed", error: host.revive(serializeError(error)) } : { kind: "stopped" };
  }
  const started = performance.now();
  const armed = armAttempt(host, a);
  try {
    // A mocked step (testing only) does not run its body; its outcome goes the body's way from here.
    const mock = host.mock?.(id);
    const { json, receipt } = mock ? mockedBody(host, id, mock, armed.timeoutMs) : await a.body(armed.info, seq);
    const outcome = {
      ...base,
      status: "completed",
      resultJson: json,
      elapsedMs: performance.now() - started,
    } as const;
    // A run step alone in flight holds its receipt back: it rides on the next write. Either way
    // the attempt's chunks are stored first: a reader never sees a step done before its stream.
    const kept = receipt ?? host.holdBack(outcome, true);
    const written = kept instanceof Promise ? await kept : kept;
    if (!written) return { kind: "stopped" };
    await host.failpoint?.(kind === "tx" ? "tx.after-commit" : "run.after-receipt");
    if (written === true || !written.conflict) return { kind: "value", value: JSON.parse(json) };
    return fromRecorded(host, written.recorded);
  } catch (thrown) {
    await host.endStream(id); // what the failed attempt wrote, for the record
    return await recordThrown(host, a, thrown, armed.stepAbort.signal, performance.now() - started);
  } finally {
    armed.disarm();
  }
}

/** What an attempt that threw records: nothing (stopped), a retry under the policy, or a failure. */
async function recordThrown(
  host: StepHost,
  a: Attempt,
  thrown: unknown,
  stepSignal: AbortSignal,
  elapsedMs: number,
): Promise<AttemptOutcome> {
  if (thrown instanceof Rollback) {
    if (!thrown.result?.owned) return { kind: "stopped" };
    return fromRecorded(host, (thrown.result as Extract<RecordResult, { conflict: true }>).recorded);
  }
  const stop = host.stopReason?.kind;
  if (stop !== undefined && stop !== "suspend" && stop !== "yield") return { kind: "stopped" };
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
    const written = await host.write({
      ...base,
      status: "waiting",
      error: serializeError(error),
      elapsedMs,
      wakeInMs: delayMs,
    });
    return written ? { kind: "retry", delayMs, error } : { kind: "stopped" };
  }
  const stored = serializeError(error);
  const written = await host.write({ ...base, status: "failed", error: stored, elapsedMs });
  return written ? { kind: "failed", error: host.revive(stored) } : { kind: "stopped" };
}

/**
 * A mocked attempt (lib/durable/testing.ts, `mockStep`): the result's JSON, as a body's would be
 * recorded (a mocked `tx` step too: no transaction, its receipt written as a `run` step's), or the
 * error the body would have thrown, so retries, their delays and fatal errors apply as usual.
 */
function mockedBody(host: StepHost, id: string, mock: StepMock, timeoutMs: number | null): BodyResult {
  if ("result" in mock) return { json: resultJson(host, mock.result, id) };
  if ("error" in mock) throw typeof mock.error === "string" ? new Error(mock.error) : mock.error;
  throw new StepTimeoutError(`step "${id}" timed out after ${timeoutMs ?? 0} ms (mocked)`);
}

function fromRecorded(host: StepHost, recorded: StepRecord): AttemptOutcome {
  if (recorded.status === "failed") return { kind: "failed", error: host.revive(recorded.error) };
  return { kind: "value", value: recorded.result };
}

/** A `run` step's body: the function, between its failpoints, and its result's JSON. */
function runBody<T>(host: StepHost, id: string, fn: (s: StepInfo) => T | Promise<T>): Body {
  return async (s) => {
    await host.failpoint?.("run.before-body");
    const value = await fn(s);
    await host.failpoint?.("run.after-body");
    return { json: resultJson(host, value, id) };
  };
}
