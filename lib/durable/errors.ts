import { storableText } from "./text";
import type { Duration } from "./types";

/**
 * The error taxonomy. Every class has a fixed snake_case `code` and a `static is(e)` that checks
 * `name`, not `instanceof`, so it works across bundles, duplicated package copies and realms.
 * `http/error-response.ts` is the one place codes map to HTTP statuses.
 */

/** `cause` is kept on the error (standard `Error` options). */
export interface DurableErrorOptions {
  cause?: unknown;
}

const hasName = (e: unknown, name: string): boolean =>
  typeof e === "object" && e !== null && (e as { name?: unknown }).name === name;

// Every name below; `DurableError.is` accepts exactly these (a test keeps the list complete).
const DURABLE_ERROR_NAMES = new Set([
  "DurableError",
  "FatalStepError",
  "RetryableStepError",
  "DuplicateStepIdError",
  "StepKindMismatchError",
  "StepNotReplaySafeError",
  "StepTimeoutError",
  "StepLeaseLostError",
  "ResultTooLargeError",
  "RunNotFoundError",
  "WorkflowNotFoundError",
  "InvalidInputError",
  "UnauthorizedError",
  "NotAnApproverError", // engine/approval-errors.ts
  "RunStateConflictError",
  "ChildRunFailedError",
  "CallbackNotFoundError",
  "DecryptionError",
]);

/** Base class: a string `code` (stable, snake_case) plus the message and optional `cause`. */
export class DurableError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: DurableErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = "DurableError";
  }
  /** True for any error of this taxonomy, from whatever copy of the package threw it. */
  static is(e: unknown): e is DurableError {
    return (
      typeof e === "object" &&
      e !== null &&
      typeof (e as { code?: unknown }).code === "string" &&
      DURABLE_ERROR_NAMES.has((e as { name?: unknown }).name as string)
    );
  }
}

// Each subclass below sets its `name` in the constructor and checks it in `is()`. A subclass of
// these defined by a user keeps `is()` working only if it keeps the `name`.

/**
 * Thrown by your step body to fail the step at once: no retries are spent, and the run fails unless
 * the body catches it.
 */
export class FatalStepError extends DurableError {
  constructor(message: string, options?: DurableErrorOptions) {
    super("fatal_step", message, options);
    this.name = "FatalStepError";
  }
  static is(e: unknown): e is FatalStepError {
    return hasName(e, "FatalStepError");
  }
}

/**
 * Thrown by your step body to ask for a retry (if the step has retries left), optionally not before
 * `retryAfter`, which then replaces the policy's delay for this attempt.
 */
export class RetryableStepError extends DurableError {
  readonly retryAfter?: Duration;
  constructor(message: string, options?: DurableErrorOptions & { retryAfter?: Duration }) {
    super("retryable_step", message, options);
    this.name = "RetryableStepError";
    if (options?.retryAfter !== undefined) this.retryAfter = options.retryAfter;
  }
  static is(e: unknown): e is RetryableStepError {
    return hasName(e, "RetryableStepError");
  }
}

/** Thrown into the body when it asks for the same step id twice in one execution; the run fails without retries. */
export class DuplicateStepIdError extends DurableError {
  constructor(
    readonly stepId: string,
    options?: DurableErrorOptions,
  ) {
    super(
      "duplicate_step_id",
      `step id "${stepId}" was used twice in one execution; step ids must be unique within a run`,
      options,
    );
    this.name = "DuplicateStepIdError";
  }
  static is(e: unknown): e is DuplicateStepIdError {
    return hasName(e, "DuplicateStepIdError");
  }
}

/**
 * Thrown into the body when a step id recorded as one kind (`expected`) is asked for as another
 * (`actual`); the run fails.
 */
export class StepKindMismatchError extends DurableError {
  constructor(
    readonly stepId: string,
    readonly expected: string,
    readonly actual: string,
    options?: DurableErrorOptions,
  ) {
    super(
      "step_kind_mismatch",
      `step "${stepId}" is recorded as a "${expected}" step but was asked for as a "${actual}" step`,
      options,
    );
    this.name = "StepKindMismatchError";
  }
  static is(e: unknown): e is StepKindMismatchError {
    return hasName(e, "StepKindMismatchError");
  }
}

/** Thrown by a step with `onReclaim: "fail"` when an owner whose lease expired may have started its effect. */
export class StepNotReplaySafeError extends DurableError {
  constructor(
    readonly stepId: string,
    readonly leaseExpiredAt: Date | null,
    readonly externalKey: string,
    options?: DurableErrorOptions,
  ) {
    const when = leaseExpiredAt ? `at ${leaseExpiredAt.toISOString()}` : "at an unknown time";
    super(
      "step_not_replay_safe",
      `step "${stepId}" may have been started by an owner whose lease expired ${when} ` +
        `(external key ${externalKey}); it is marked onReclaim: "fail", so it is not run again`,
      options,
    );
    this.name = "StepNotReplaySafeError";
  }
  static is(e: unknown): e is StepNotReplaySafeError {
    return hasName(e, "StepNotReplaySafeError");
  }
}

/** Thrown by a step whose body ran past its `timeout` (its `abortSignal` fired), and by `waitFor` past its deadline. */
export class StepTimeoutError extends DurableError {
  constructor(message: string, options?: DurableErrorOptions) {
    super("step_timeout", message, options);
    this.name = "StepTimeoutError";
  }
  static is(e: unknown): e is StepTimeoutError {
    return hasName(e, "StepTimeoutError");
  }
}

/**
 * Thrown by `s.heartbeat()` (and fired on `s.abortSignal`) once the run was cancelled or taken over by
 * a newer owner: this owner writes nothing more, and its result is not recorded.
 */
export class StepLeaseLostError extends DurableError {
  constructor(message: string, options?: DurableErrorOptions) {
    super("step_lease_lost", message, options);
    this.name = "StepLeaseLostError";
  }
  static is(e: unknown): e is StepLeaseLostError {
    return hasName(e, "StepLeaseLostError");
  }
}

/** Thrown by a step (or the run's end) whose result's JSON text is `bytes` long (UTF-8), over the `limit`. */
export class ResultTooLargeError extends DurableError {
  readonly stepId?: string;
  readonly bytes: number;
  readonly limit: number;
  constructor(info: { stepId?: string; bytes: number; limit: number }, options?: DurableErrorOptions) {
    const what = info.stepId === undefined ? "result" : `result of step "${info.stepId}"`;
    super("result_too_large", `${what} is ${info.bytes} bytes as JSON, over the limit of ${info.limit} bytes`, options);
    this.name = "ResultTooLargeError";
    if (info.stepId !== undefined) this.stepId = info.stepId;
    this.bytes = info.bytes;
    this.limit = info.limit;
  }
  static is(e: unknown): e is ResultTooLargeError {
    return hasName(e, "ResultTooLargeError");
  }
}

/** Thrown by `signal`, `cancel` and `retry` when no run has this id (HTTP 404). */
export class RunNotFoundError extends DurableError {
  constructor(
    readonly runId: string,
    options?: DurableErrorOptions,
  ) {
    super("run_not_found", `run "${runId}" not found`, options);
    this.name = "RunNotFoundError";
  }
  static is(e: unknown): e is RunNotFoundError {
    return hasName(e, "RunNotFoundError");
  }
}

/** Thrown by `start` when the workflow is not registered on this instance (HTTP 404). */
export class WorkflowNotFoundError extends DurableError {
  constructor(
    readonly workflow: string,
    options?: DurableErrorOptions,
  ) {
    super("workflow_not_found", `workflow "${workflow}" is not registered`, options);
    this.name = "WorkflowNotFoundError";
  }
  static is(e: unknown): e is WorkflowNotFoundError {
    return hasName(e, "WorkflowNotFoundError");
  }
}

/**
 * Thrown by any call given bad input: a malformed duration or option, an id or name that cannot be stored,
 * an input or payload failing its zod schema (`issues`). HTTP 422. Nothing was written.
 */
export class InvalidInputError extends DurableError {
  readonly issues?: unknown;
  constructor(message: string, options?: DurableErrorOptions & { issues?: unknown }) {
    super("invalid_input", message, options);
    this.name = "InvalidInputError";
    if (options?.issues !== undefined) this.issues = options.issues;
  }
  static is(e: unknown): e is InvalidInputError {
    return hasName(e, "InvalidInputError");
  }
}

/** Thrown by the routes when credentials are missing or wrong (HTTP 401). */
export class UnauthorizedError extends DurableError {
  constructor(message = "unauthorized", options?: DurableErrorOptions) {
    super("unauthorized", message, options);
    this.name = "UnauthorizedError";
  }
  static is(e: unknown): e is UnauthorizedError {
    return hasName(e, "UnauthorizedError");
  }
}

/**
 * Thrown when the run is not in a state that allows the call: `cancel` of a terminal run, `retry` of a
 * run that has not failed, a signal to a finished run or a timed-out wait, `start` of an id that exists
 * under another workflow, any call on a closed instance. HTTP 409.
 */
export class RunStateConflictError extends DurableError {
  /** A singleton's start (or retry) was refused: the id of the run that holds its key. */
  readonly activeRunId?: string;
  constructor(message: string, options?: DurableErrorOptions & { activeRunId?: string }) {
    super("run_state_conflict", message, options);
    this.name = "RunStateConflictError";
    if (options?.activeRunId !== undefined) this.activeRunId = options.activeRunId;
  }
  static is(e: unknown): e is RunStateConflictError {
    return hasName(e, "RunStateConflictError");
  }
}

/**
 * Thrown by `ctx.step.invoke` in the parent when its child run failed or was cancelled: the
 * child's id, how it ended, and its stored error. The body may catch it; a replay throws it again.
 */
export class ChildRunFailedError extends DurableError {
  readonly childId: string;
  readonly childStatus: "failed" | "cancelled";
  readonly error: { code: string; message: string; name?: string } | null;
  constructor(
    info: {
      childId: string;
      childStatus: "failed" | "cancelled";
      error: { code: string; message: string; name?: string } | null;
    },
    options?: DurableErrorOptions,
  ) {
    super(
      "child_run_failed",
      `child run "${info.childId}" ${info.childStatus}: ${info.error?.message ?? "no message"}`,
      options,
    );
    this.name = "ChildRunFailedError";
    this.childId = info.childId;
    this.childStatus = info.childStatus;
    this.error = info.error;
  }
  static is(e: unknown): e is ChildRunFailedError {
    return hasName(e, "ChildRunFailedError");
  }
}

/**
 * Thrown by `completeCallback` (and answered 404 by the callback route, with the same body) for a
 * token that is malformed, forged, or names no callback: which of these is not said.
 */
export class CallbackNotFoundError extends DurableError {
  constructor(options?: DurableErrorOptions) {
    super("callback_not_found", "no such callback", options);
    this.name = "CallbackNotFoundError";
  }
  static is(e: unknown): e is CallbackNotFoundError {
    return hasName(e, "CallbackNotFoundError");
  }
}

/**
 * A stored payload could not be opened (docs/guide/encryption.md): no configured key has the id its
 * envelope names (`reason: "missing_key"`: add the key, decrypt-only if it is retired), or the key
 * with that id does not open it (`"unreadable"`: another secret under the same id, or changed bytes).
 * Nothing is written on this path: the run stays as it is until the key is back.
 */
export class DecryptionError extends DurableError {
  readonly keyId: string;
  readonly reason: "missing_key" | "unreadable";
  /** The run whose claim was refused, when a claim threw it (a tick's report names it). */
  readonly runId?: string;
  constructor(
    info: { keyId: string; reason: "missing_key" | "unreadable"; runId?: string },
    options?: DurableErrorOptions,
  ) {
    super(
      "decryption_failed",
      info.reason === "missing_key"
        ? `a stored payload is encrypted under key "${info.keyId}", which is not configured ` +
            "(encryption.keys or DURABLE_ENCRYPTION_KEYS)"
        : `a stored payload encrypted under key "${info.keyId}" cannot be opened with that key: ` +
            "its secret differs or the payload was altered",
      options,
    );
    this.name = "DecryptionError";
    this.keyId = info.keyId;
    this.reason = info.reason;
    if (info.runId !== undefined) this.runId = info.runId;
  }
  static is(e: unknown): e is DecryptionError {
    return hasName(e, "DecryptionError");
  }
}

/** The longest error message stored, in UTF-16 code units; the rest is cut (with "…"). */
export const MAX_ERROR_MESSAGE_LENGTH = 16_384;

/**
 * A step's or run's error as stored in the database. A taxonomy error keeps its code; any other
 * error (also from another realm) gets code `"error"`; a thrown non-error becomes `String(value)`.
 * Whatever was thrown, the result is storable: NUL characters and lone surrogates, which Postgres
 * jsonb refuses, become U+FFFD (text.ts), a message is cut at MAX_ERROR_MESSAGE_LENGTH, and a
 * value whose `message`, `name` or `toString` throws is described instead of read.
 */
export function serializeError(e: unknown): { code: string; message: string; name: string } {
  const clean = (text: string) => storableText(text, MAX_ERROR_MESSAGE_LENGTH);
  try {
    if (DurableError.is(e)) return { code: e.code, message: clean(e.message), name: e.name };
    if (typeof e === "object" && e !== null && typeof (e as Error).message === "string") {
      const name = (e as Error).name;
      return {
        code: "error",
        message: clean((e as Error).message),
        name: typeof name === "string" ? storableText(name, 255) : "Error",
      };
    }
  } catch {
    // A getter that throws: fall through to what String() makes of it.
  }
  return { code: "error", message: clean(describe(e)), name: "NonError" };
}

/** `String(value)`, or the best description there is when that throws (a Proxy, a bad toString). */
function describe(value: unknown): string {
  try {
    return String(value);
  } catch {
    try {
      return Object.prototype.toString.call(value);
    } catch {
      return "[a thrown value that cannot be described]";
    }
  }
}

/**
 * @deprecated Nothing throws a class of its own for a lost claim: `StepLeaseLostError` is what a
 * superseded owner sees. The old name is kept as that class, so `LeaseLostError.is(e)` still works.
 */
export const LeaseLostError = StepLeaseLostError;
/** @deprecated See the value of the same name. */
export type LeaseLostError = StepLeaseLostError;
