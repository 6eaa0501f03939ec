import type { Transaction } from "kysely";
import { toMs } from "../duration";
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
import { type Execution, never, type StepMock } from "../engine/execution";
import { failpoint } from "../engine/failpoints";
import type { StepRecorder } from "../engine/step-recorder";
import { heartbeatRun, insertEvent, type RecordResult, type StepRecord } from "../store";
import type { StepInfo, StepOptions } from "../types";
import { externalKeyFor } from "./external-key";
import { pause } from "./pause";
import { canRetry, type RetryPolicy, resolveRetryPolicy, retryDelayMs } from "./retry-policy";

/** A body's result: for `tx` the receipt was already written inside its transaction. */
export type BodyResult = { json: string; receipt?: Extract<RecordResult, { owned: true }> };
export type Body = (s: StepInfo, seq: number) => Promise<BodyResult>;
/** The kinds of step that run a body with an effect: `run`, `tx`, and AI calls (steps/ai-steps.ts). */
export type EffectKind = "run" | "tx" | "ai";

type AttemptOutcome =
  | { kind: "value"; value: unknown }
  | { kind: "failed"; error: Error }
  | { kind: "retry"; delayMs: number; error: unknown }
  | { kind: "stopped" };

/**
 * Thrown inside a `tx` transaction to roll it back without recording; never reaches users.
 * `refused`: the fence refused the receipt (rather than the deadline or the database).
 */
class Rollback {
  constructor(
    readonly result: RecordResult | null,
    readonly refused: boolean,
  ) {}
}

/**
 * `run` and `tx`: steps with an effect, executed under the budget with retries, leases,
 * heartbeats, timeouts and the reclaim rules (docs/rules.md, rules 6, 7a, 11, 14).
 */
export function createEffectSteps(exec: Execution, recorder: StepRecorder) {
  const { settings } = exec;

  async function execute(id: string, kind: EffectKind, body: Body, options: StepOptions = {}): Promise<any> {
    const { seq, recorded, isReclaim } = exec.reach(id, kind);
    const known = recorder.answer(recorded);
    if (known.done) return known.value;
    const policy = resolveRetryPolicy(options);
    const leaseMs = toMs(options.lease ?? settings.leaseMs, "lease");
    if (options.heartbeat !== undefined && toMs(options.heartbeat, "heartbeat") >= leaseMs) {
      throw new InvalidInputError(`step "${id}": heartbeat must be shorter than the lease (${leaseMs} ms)`);
    }
    const externalKey = externalKeyFor(exec.runId, id);
    let attempt = exec.priorAttempts(recorded, isReclaim) + 1;
    if (!exec.everFits(leaseMs)) {
      // Giving the run back would only bring it here again: fail the step, clearly, at once.
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
    // Only the first attempt of this execution may be one a lost owner also ran (rule 7a).
    let reclaim = isReclaim;
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
      // One `durable.step` span per attempt (engine/tracing.ts), inside the tracked work, so it ends
      // with the attempt's own outcome before a stop waiting for it settles.
      const outcome = await exec.track(() =>
        recorder.traced(
          { stepId: id, kind, attempt, isReclaim: reclaim },
          () => attemptOnce(id, kind, seq, attempt, externalKey, reclaim, body, options, policy),
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
      if (outcome.kind === "stopped") return never();
      if (outcome.kind === "value") return outcome.value;
      if (outcome.kind === "failed") throw outcome.error;
      dueAt = new Date(exec.dbNow().getTime() + outcome.delayMs);
      attempt++;
      reclaim = false;
    }
  }

  async function attemptOnce(
    id: string,
    kind: EffectKind,
    seq: number,
    attempt: number,
    externalKey: string,
    isReclaim: boolean,
    body: Body,
    options: StepOptions,
    policy: RetryPolicy,
  ): Promise<AttemptOutcome> {
    const base = { stepId: id, seq, kind, attempt, externalKey } as const;
    if (isReclaim && options.onReclaim === "fail") {
      const error = new StepNotReplaySafeError(id, exec.claim.run.lostLeaseUntil, externalKey);
      const written = await recorder.write({ ...base, status: "failed", error: serializeError(error) });
      return written ? { kind: "failed", error: recorder.revive(serializeError(error)) } : { kind: "stopped" };
    }
    const started = performance.now();
    const stepAbort = new AbortController();
    const timeoutMs = options.timeout === undefined ? null : toMs(options.timeout, "timeout");
    const timer =
      timeoutMs === null
        ? null
        : setTimeout(
            () => stepAbort.abort(new StepTimeoutError(`step "${id}" timed out after ${timeoutMs} ms`)),
            timeoutMs,
          );
    const heartbeat = () => beat(id);
    const beatMs = options.heartbeat === undefined ? null : toMs(options.heartbeat, "heartbeat");
    const beating = beatMs === null ? null : setInterval(() => heartbeat().catch((e) => stepAbort.abort(e)), beatMs);
    let abortSignal: AbortSignal | null = null;
    const info: StepInfo = {
      stepId: id,
      externalKey,
      attempt,
      isReclaim,
      heartbeat,
      // Made when a body first reads it: most bodies never do, and AbortSignal.any costs as much
      // as the rest of a step's bookkeeping.
      get abortSignal() {
        abortSignal ??= AbortSignal.any([exec.abort.signal, stepAbort.signal]);
        return abortSignal;
      },
    };
    // A tx body runs inside its transaction: on PGlite's one connection a stream append would
    // wait for it, so streams are for `run` and AI steps.
    if (kind !== "tx") exec.streams.begin(id, attempt);
    try {
      // A mocked step (testing only) does not run its body; its outcome goes the body's way from here.
      const mock = settings.mockStep?.(exec.runId, id);
      const { json, receipt } = mock ? mockedBody(id, mock, timeoutMs) : await body(info, seq);
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
      return written.conflict ? fromRecorded(written.recorded) : { kind: "value", value: JSON.parse(json) };
    } catch (thrown) {
      await exec.streams.end(id).catch(() => {}); // what the failed attempt wrote, for the record
      if (thrown instanceof Rollback) {
        if (!thrown.result?.owned) return { kind: "stopped" };
        return fromRecorded((thrown.result as Extract<RecordResult, { conflict: true }>).recorded);
      }
      if (exec.isStopping && exec.stopReason?.kind !== "suspend" && exec.stopReason?.kind !== "yield")
        return { kind: "stopped" };
      const reason = stepAbort.signal.reason;
      const error = stepAbort.signal.aborted && StepTimeoutError.is(reason) ? reason : thrown;
      const elapsedMs = performance.now() - started;
      const fatal = FatalStepError.is(error) || ResultTooLargeError.is(error) || InvalidInputError.is(error);
      if (!fatal && canRetry(policy, attempt)) {
        const retryAfter =
          RetryableStepError.is(error) && error.retryAfter !== undefined ? toMs(error.retryAfter, "retryAfter") : null;
        const delayMs = retryAfter ?? retryDelayMs(policy, attempt);
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
    } finally {
      if (timer) clearTimeout(timer);
      if (beating) clearInterval(beating);
    }
  }

  /** s.heartbeat(): confirms the fence; once superseded, stops the execution and rejects. */
  async function beat(id: string): Promise<void> {
    if (exec.stopReason?.kind === "lost") throw new StepLeaseLostError(`step "${id}": ${exec.stopReason.reason}`);
    // Past the invocation's deadline the lease may be gone already: never answer "owned" then.
    const state = exec.remainingMs() <= 0 ? "expired" : await heartbeatRun(exec.db, exec.runId, exec.fence);
    if (state !== "owned") {
      const reason = state === "cancelled" ? "cancelled" : state === "expired" ? "lease expired" : "lease lost";
      recorder.noteFenceRejected(id, "heartbeat", reason);
      exec.requestStop({ kind: "lost", reason });
      throw new StepLeaseLostError(`step "${id}": ${reason}`);
    }
  }

  /** The event a rolled-back `tx` receipt's statement wrote, written again after the rollback. */
  async function noteRolledBack(id: string, rollback: Rollback): Promise<void> {
    const result = rollback.result;
    const event =
      result?.owned && result.conflict
        ? { kind: "step.outcome-conflict", data: { recorded: result.recorded.status, late: "completed" } }
        : rollback.refused
          ? { kind: "fence.rejected", data: { write: "tx", late: "completed" } }
          : null;
    if (!event) return;
    try {
      await insertEvent(exec.db, { runId: exec.runId, stepId: id, fence: exec.fence, ...event });
    } catch (error) {
      settings.log(`[${exec.runId}] could not note ${event.kind} of tx step "${id}": ${String(error)}`);
    }
  }

  /**
   * A mocked attempt (lib/durable/testing.ts, `mockStep`): the result's JSON, as a body's would be
   * recorded (a mocked `tx` step too: no transaction, its receipt written as a `run` step's), or the
   * error the body would have thrown, so retries, their delays and fatal errors apply as usual.
   */
  function mockedBody(id: string, mock: StepMock, timeoutMs: number | null): BodyResult {
    if ("result" in mock) return { json: recorder.json(mock.result, id) };
    if ("error" in mock) throw typeof mock.error === "string" ? new Error(mock.error) : mock.error;
    throw new StepTimeoutError(`step "${id}" timed out after ${timeoutMs ?? 0} ms (mocked)`);
  }

  function fromRecorded(recorded: StepRecord): AttemptOutcome {
    if (recorded.status === "failed") return { kind: "failed", error: recorder.revive(recorded.error) };
    return { kind: "value", value: recorded.result };
  }

  return {
    /** Runs `body` as a step of `kind` with the effect-step rules; for step kinds built on them. */
    execute,

    run<T>(id: string, fn: (s: StepInfo) => T | Promise<T>, options?: StepOptions) {
      return execute(
        id,
        "run",
        async (s) => {
          await failpoint("run.before-body");
          const value = await fn(s);
          await failpoint("run.after-body");
          return { json: recorder.json(value, id) };
        },
        options,
      );
    },

    tx<T>(id: string, fn: (tx: Transaction<any>, s: StepInfo) => Promise<T>, options?: StepOptions) {
      return execute(
        id,
        "tx",
        async (s, seq) => {
          const started = performance.now();
          let result!: BodyResult;
          let bodyReturned = false;
          // One transaction: the body's statements, the receipt and its fence check commit together.
          await exec.db
            .transaction()
            .execute(async (trx) => {
              const value = await fn(trx, s);
              bodyReturned = true;
              await failpoint("tx.after-effect");
              const json = recorder.json(value, id);
              let refused = false;
              const receipt = await recorder.write(
                {
                  stepId: id,
                  seq,
                  kind: "tx",
                  status: "completed",
                  attempt: s.attempt,
                  externalKey: s.externalKey,
                  resultJson: json,
                  elapsedMs: performance.now() - started,
                },
                trx,
                () => {
                  refused = true;
                },
              );
              // Lost fence, or a first write already recorded: roll the effect back.
              if (!receipt || receipt.conflict) throw new Rollback(receipt, refused);
              await failpoint("tx.after-receipt");
              result = { json, receipt };
            })
            .catch(async (error) => {
              // The receipt's statement noted the refusal or the conflict inside the transaction,
              // which rolled back with it: note it again, now, on its own.
              if (error instanceof Rollback) await noteRolledBack(id, error);
              // The body succeeded but its receipt or the commit failed under it: not a step
              // failure (rule 14). Stop; the next owner finds no receipt and re-runs it as a reclaim.
              if (
                bodyReturned &&
                !(error instanceof Rollback) &&
                !ResultTooLargeError.is(error) &&
                !InvalidInputError.is(error)
              ) {
                settings.log(`[${exec.runId}] tx step "${id}" could not commit its receipt: ${String(error)}`);
                exec.requestStop({ kind: "abandon", reason: "the database failed under a tx receipt" });
              }
              throw error;
            });
          return result;
        },
        options,
      );
    },
  };
}
