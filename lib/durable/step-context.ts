import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import type { SignalSchemas } from "./define-workflow";
import { toMs, type Duration } from "./duration";
import {
  DurableError,
  FatalStepError,
  InvalidInputError,
  ResultTooLargeError,
  RetryableStepError,
  serializeError,
  StepLeaseLostError,
  StepNotReplaySafeError,
  StepTimeoutError,
} from "./errors";
import { never, type Execution } from "./execution";
import { externalKeyFor } from "./external-key";
import { toJsonText } from "./json";
import { recordStep, type RecordResult, type StepOutcome } from "./ledger";
import { canRetry, resolveRetryPolicy, retryDelayMs, type RetryBackoff, type RetryPolicy } from "./retry-policy";
import type { StepKind, StepRecord, StoredError } from "./rows";

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

/** Thrown inside a `tx` transaction to roll it back without recording; never reaches users. */
class Rollback {
  constructor(readonly result: RecordResult) {}
}

/** Builds `ctx.step` for one execution. */
export function createStepApi(exec: Execution): StepApi {
  const { settings } = exec;

  function revive(error: StoredError | null): Error {
    const revived = new Error(error?.message ?? "step failed");
    revived.name = error?.name ?? "Error";
    Object.assign(revived, { code: error?.code ?? "error" });
    return revived;
  }

  /** Answers a step from its receipt, or says it must execute. */
  function answer(recorded: StepRecord | undefined): { done: true; value: Promise<any> } | { done: false } {
    if (recorded?.status === "completed") return { done: true, value: Promise.resolve(recorded.result) };
    if (recorded?.status === "failed") return { done: true, value: Promise.reject(revive(recorded.error)) };
    return { done: false };
  }

  /** Writes an outcome; a lost fence or a failed write stops the execution (rule 14). */
  async function write(outcome: StepOutcome, tx?: Transaction<any>): Promise<RecordResult | null> {
    if (exec.remainingMs() <= 0) {
      exec.requestStop({ kind: "abandon", reason: "past the invocation deadline" });
      return null;
    }
    try {
      const result = await recordStep(tx ?? exec.db, exec.runId, exec.fence, outcome);
      if (!result.owned) exec.requestStop({ kind: "lost" });
      else exec.noteReceiptWritten();
      return result.owned ? result : null;
    } catch (error) {
      if (tx) throw error;
      settings.log(`receipt of step "${outcome.stepId}" could not be written: ${String(error)}`);
      exec.requestStop({ kind: "abandon", reason: "the database failed under a receipt write" });
      return null;
    }
  }

  async function executeEffect<T>(
    id: string,
    kind: "run" | "tx",
    body: (s: StepInfo) => Promise<{ value: T; json: string; recorded?: RecordResult | null }>,
    options: StepOptions = {},
  ): Promise<any> {
    const { seq, recorded, isReclaim } = exec.reach(id, kind);
    const known = answer(recorded);
    if (known.done) return known.value;
    const policy = resolveRetryPolicy(options);
    const leaseMs = toMs(options.lease ?? settings.leaseMs, "lease");
    const externalKey = externalKeyFor(exec.runId, id);
    let attempt = exec.priorAttempts(recorded, isReclaim) + 1;
    let waitUntil = recorded?.status === "waiting" ? recorded.wakeAt : null;

    for (;;) {
      if (exec.isStopping) return never();
      if (waitUntil && waitUntil > exec.dbNow()) {
        const delay = waitUntil.getTime() - exec.dbNow().getTime();
        if (!exec.fits(delay + leaseMs)) {
          exec.requestStop({ kind: "suspend", stepIds: [id], waitingFor: { kind: "retry", name: id } });
          return never();
        }
        await exec.track(() => sleep(delay, exec.abort.signal));
        if (exec.isStopping) return never();
      }
      if (!exec.fits(leaseMs)) {
        exec.requestStop({ kind: "yield", stepId: id });
        return never();
      }
      const outcome = await exec.track(() =>
        attemptOnce(id, kind, seq, attempt, externalKey, isReclaim && attempt === exec.priorAttempts(recorded, isReclaim) + 1, body, options, policy),
      );
      if (outcome.kind === "stopped") return never();
      if (outcome.kind === "value") return outcome.value;
      if (outcome.kind === "failed") throw outcome.error;
      // A retry: its due time is on the step row; wait here if it fits, else park the run.
      waitUntil = new Date(exec.dbNow().getTime() + outcome.delayMs);
      attempt++;
    }
  }

  type AttemptOutcome =
    | { kind: "value"; value: unknown }
    | { kind: "failed"; error: Error }
    | { kind: "retry"; delayMs: number }
    | { kind: "stopped" };

  async function attemptOnce<T>(
    id: string, kind: "run" | "tx", seq: number, attempt: number, externalKey: string, isReclaim: boolean,
    body: (s: StepInfo) => Promise<{ value: T; json: string; recorded?: RecordResult | null }>,
    options: StepOptions, policy: RetryPolicy,
  ): Promise<AttemptOutcome> {
    const base = { stepId: id, seq, kind, attempt, externalKey } as const;
    const started = performance.now();
    if (isReclaim && options.onReclaim === "fail") {
      const error = new StepNotReplaySafeError(id, exec.claim.run.lostLeaseUntil, externalKey);
      const written = await write({ ...base, status: "failed", error: serializeError(error) });
      return written ? { kind: "failed", error } : { kind: "stopped" };
    }
    const stepAbort = new AbortController();
    const abortSignal = AbortSignal.any([exec.abort.signal, stepAbort.signal]);
    const timeoutMs = options.timeout === undefined ? null : toMs(options.timeout, "timeout");
    const timer = timeoutMs === null ? null : setTimeout(() => stepAbort.abort(new StepTimeoutError(`step "${id}" timed out after ${timeoutMs} ms`)), timeoutMs);
    const heartbeat = async () => {
      if (exec.isStopping && exec.stopReason?.kind === "lost") throw new StepLeaseLostError(`step "${id}": the run was claimed by another owner`);
      const { rows } = await sql<{ ok: boolean }>`select durable_heartbeat(${exec.runId}, ${exec.fence}::bigint) as ok`.execute(exec.db);
      if (!rows[0]?.ok) {
        exec.requestStop({ kind: "lost" });
        throw new StepLeaseLostError(`step "${id}": the run was claimed by another owner`);
      }
    };
    const beatMs = options.heartbeat === undefined ? null : toMs(options.heartbeat, "heartbeat");
    const beat = beatMs === null ? null : setInterval(() => heartbeat().catch(() => stepAbort.abort("lease lost")), beatMs);
    const info: StepInfo = { stepId: id, externalKey, attempt, isReclaim, heartbeat, abortSignal };
    try {
      const { value, json, recorded } = await body(info);
      if (kind === "tx") {
        if (!recorded) return { kind: "stopped" };
        exec.noteReceiptWritten();
        return { kind: "value", value: recorded.owned && recorded.conflict ? recorded.recorded.result : JSON.parse(json) };
      }
      const written = await write({ ...base, status: "completed", resultJson: json, elapsedMs: performance.now() - started });
      if (!written) return { kind: "stopped" };
      if (written.owned && written.conflict) return fromRecorded(written.recorded);
      return { kind: "value", value: JSON.parse(json) };
    } catch (thrown) {
      if (thrown instanceof Rollback) {
        if (!thrown.result.owned) {
          exec.requestStop({ kind: "lost" });
          return { kind: "stopped" };
        }
        exec.noteReceiptWritten();
        return fromRecorded((thrown.result as Extract<RecordResult, { conflict: true }>).recorded);
      }
      if (exec.isStopping && exec.stopReason?.kind !== "yield") return { kind: "stopped" };
      const error = stepAbort.signal.aborted && stepAbort.signal.reason instanceof StepTimeoutError ? stepAbort.signal.reason : thrown;
      const fatal = FatalStepError.is(error) || ResultTooLargeError.is(error) || InvalidInputError.is(error);
      const elapsedMs = performance.now() - started;
      if (!fatal && canRetry(policy, attempt)) {
        const retryAfter = RetryableStepError.is(error) && error.retryAfter !== undefined ? toMs(error.retryAfter, "retryAfter") : null;
        const delayMs = retryAfter ?? retryDelayMs(policy, attempt);
        const written = await write({ ...base, status: "waiting", error: serializeError(error), elapsedMs, wakeInMs: delayMs });
        return written ? { kind: "retry", delayMs } : { kind: "stopped" };
      }
      const stored = serializeError(error);
      const written = await write({ ...base, status: "failed", error: stored, elapsedMs });
      return written ? { kind: "failed", error: revive(stored) } : { kind: "stopped" };
    } finally {
      if (timer) clearTimeout(timer);
      if (beat) clearInterval(beat);
    }
  }

  function fromRecorded(recorded: StepRecord): AttemptOutcome {
    if (recorded.status === "failed") return { kind: "failed", error: revive(recorded.error) };
    return { kind: "value", value: recorded.result };
  }

  const json = (value: unknown, stepId: string) => toJsonText(value, { limit: settings.maxResultBytes, stepId });

  return {
    run(id, fn, options) {
      return executeEffect(id, "run", async (s) => {
        const value = await fn(s);
        return { value, json: json(value, id) };
      }, options);
    },

    tx(id, fn, options) {
      return executeEffect(id, "tx", async (s) => {
        const started = performance.now();
        let text = "null";
        let recorded: RecordResult | null = null;
        // One transaction: the body's statements, the receipt and its fence check commit together.
        await exec.db.transaction().execute(async (trx) => {
          const value = await fn(trx as Transaction<any>, s);
          text = json(value, id);
          const result = await write({ stepId: id, seq: 0, kind: "tx", status: "completed", attempt: s.attempt, externalKey: s.externalKey, resultJson: text, elapsedMs: performance.now() - started }, trx);
          if (!result || !result.owned || result.conflict) throw new Rollback(result ?? { owned: false });
          recorded = result;
        });
        return { value: undefined as never, json: text, recorded };
      }, options);
    },

    async value(id, fn) {
      const { seq, recorded } = exec.reach(id, "value");
      const known = answer(recorded);
      if (known.done) return known.value;
      if (exec.isStopping) return never();
      const value = await fn();
      const text = json(value, id);
      const written = await exec.track(() => write({ stepId: id, seq, kind: "value", status: "completed", attempt: 1, resultJson: text }));
      if (!written) return never();
      if (written.owned && written.conflict) return written.recorded.result as any;
      return JSON.parse(text);
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

export type { StepKind };
export { DurableError };
