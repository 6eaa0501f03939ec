import type { Duration } from "./duration";

/**
 * The error taxonomy. Every class has a fixed snake_case `code` and a `static is(e)` that checks
 * `name`, not `instanceof`, so it works across bundles, duplicated package copies and realms.
 * `httpStatusOf` is the one place codes map to HTTP statuses.
 */

/** `cause` is kept on the error (standard `Error` options). */
export interface DurableErrorOptions {
  cause?: unknown;
}

const hasName = (e: unknown, name: string): boolean =>
  typeof e === "object" && e !== null && (e as { name?: unknown }).name === name;

// Every name below; `DurableError.is` accepts exactly these (a test keeps the list complete).
const DURABLE_ERROR_NAMES = new Set([
  "DurableError", "FatalStepError", "RetryableStepError", "LeaseLostError", "DuplicateStepIdError",
  "StepKindMismatchError", "StepNotReplaySafeError", "StepTimeoutError", "StepLeaseLostError",
  "ResultTooLargeError", "RunNotFoundError", "WorkflowNotFoundError", "InvalidInputError",
  "UnauthorizedError", "RunStateConflictError",
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
      typeof e === "object" && e !== null && typeof (e as { code?: unknown }).code === "string" &&
      DURABLE_ERROR_NAMES.has((e as { name?: unknown }).name as string)
    );
  }
}

// Each subclass below sets its `name` in the constructor and checks it in `is()`. A subclass of
// these defined by a user keeps `is()` working only if it keeps the `name`.

/** Thrown by a step body to fail the step at once: no retries are spent. */
export class FatalStepError extends DurableError {
  constructor(message: string, options?: DurableErrorOptions) {
    super("fatal_step", message, options);
    this.name = "FatalStepError";
  }
  static is(e: unknown): e is FatalStepError { return hasName(e, "FatalStepError"); }
}

/**
 * Thrown by a step body to ask for a retry (if the step has retries left), optionally not before
 * `retryAfter`, which then replaces the policy's delay for this attempt.
 */
export class RetryableStepError extends DurableError {
  readonly retryAfter?: Duration;
  constructor(message: string, options?: DurableErrorOptions & { retryAfter?: Duration }) {
    super("retryable_step", message, options);
    this.name = "RetryableStepError";
    if (options?.retryAfter !== undefined) this.retryAfter = options.retryAfter;
  }
  static is(e: unknown): e is RetryableStepError { return hasName(e, "RetryableStepError"); }
}

/** The run's claim (lease + fence) was lost to another owner; this owner must stop writing. */
export class LeaseLostError extends DurableError {
  constructor(message = "the run's lease was lost to another owner", options?: DurableErrorOptions) {
    super("lease_lost", message, options);
    this.name = "LeaseLostError";
  }
  static is(e: unknown): e is LeaseLostError { return hasName(e, "LeaseLostError"); }
}

/** The same step id was asked for twice in one execution; the run fails without retries. */
export class DuplicateStepIdError extends DurableError {
  constructor(readonly stepId: string, options?: DurableErrorOptions) {
    super("duplicate_step_id", `step id "${stepId}" was used twice in one execution; step ids must be unique within a run`, options);
    this.name = "DuplicateStepIdError";
  }
  static is(e: unknown): e is DuplicateStepIdError { return hasName(e, "DuplicateStepIdError"); }
}

/** A step id recorded as one kind (`expected`) was asked for as another kind (`actual`). */
export class StepKindMismatchError extends DurableError {
  constructor(readonly stepId: string, readonly expected: string, readonly actual: string, options?: DurableErrorOptions) {
    super("step_kind_mismatch", `step "${stepId}" is recorded as a "${expected}" step but was asked for as a "${actual}" step`, options);
    this.name = "StepKindMismatchError";
  }
  static is(e: unknown): e is StepKindMismatchError { return hasName(e, "StepKindMismatchError"); }
}

/** `onReclaim: "fail"`: an owner whose lease expired may have started this step's effect. */
export class StepNotReplaySafeError extends DurableError {
  constructor(readonly stepId: string, readonly leaseExpiredAt: Date | null, readonly externalKey: string, options?: DurableErrorOptions) {
    const when = leaseExpiredAt ? `at ${leaseExpiredAt.toISOString()}` : "at an unknown time";
    super("step_not_replay_safe", `step "${stepId}" may have been started by an owner whose lease expired ${when} (external key ${externalKey}); it is marked onReclaim: "fail", so it is not run again`, options);
    this.name = "StepNotReplaySafeError";
  }
  static is(e: unknown): e is StepNotReplaySafeError { return hasName(e, "StepNotReplaySafeError"); }
}

/** A step body ran past its `timeout` (its `abortSignal` was aborted). */
export class StepTimeoutError extends DurableError {
  constructor(message: string, options?: DurableErrorOptions) {
    super("step_timeout", message, options);
    this.name = "StepTimeoutError";
  }
  static is(e: unknown): e is StepTimeoutError { return hasName(e, "StepTimeoutError"); }
}

/** A step body outlived its step lease (no heartbeat in time); its result is not recorded. */
export class StepLeaseLostError extends DurableError {
  constructor(message: string, options?: DurableErrorOptions) {
    super("step_lease_lost", message, options);
    this.name = "StepLeaseLostError";
  }
  static is(e: unknown): e is StepLeaseLostError { return hasName(e, "StepLeaseLostError"); }
}

/** A result's JSON text is `bytes` long (UTF-8), over the `limit`. */
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
  static is(e: unknown): e is ResultTooLargeError { return hasName(e, "ResultTooLargeError"); }
}

/** No run with this id (HTTP 404). */
export class RunNotFoundError extends DurableError {
  constructor(readonly runId: string, options?: DurableErrorOptions) {
    super("run_not_found", `run "${runId}" not found`, options);
    this.name = "RunNotFoundError";
  }
  static is(e: unknown): e is RunNotFoundError { return hasName(e, "RunNotFoundError"); }
}

/** No workflow registered under this name (HTTP 404). */
export class WorkflowNotFoundError extends DurableError {
  constructor(readonly workflow: string, options?: DurableErrorOptions) {
    super("workflow_not_found", `workflow "${workflow}" is not registered`, options);
    this.name = "WorkflowNotFoundError";
  }
  static is(e: unknown): e is WorkflowNotFoundError { return hasName(e, "WorkflowNotFoundError"); }
}

/** Bad input: a malformed duration or option, or a payload failing its zod schema (`issues`). HTTP 422. */
export class InvalidInputError extends DurableError {
  readonly issues?: unknown;
  constructor(message: string, options?: DurableErrorOptions & { issues?: unknown }) {
    super("invalid_input", message, options);
    this.name = "InvalidInputError";
    if (options?.issues !== undefined) this.issues = options.issues;
  }
  static is(e: unknown): e is InvalidInputError { return hasName(e, "InvalidInputError"); }
}

/** Missing or wrong credentials (HTTP 401). */
export class UnauthorizedError extends DurableError {
  constructor(message = "unauthorized", options?: DurableErrorOptions) {
    super("unauthorized", message, options);
    this.name = "UnauthorizedError";
  }
  static is(e: unknown): e is UnauthorizedError { return hasName(e, "UnauthorizedError"); }
}

/** The run is not in a state that allows this (cancel a terminal run, signal a timed-out wait…). HTTP 409. */
export class RunStateConflictError extends DurableError {
  constructor(message: string, options?: DurableErrorOptions) {
    super("run_state_conflict", message, options);
    this.name = "RunStateConflictError";
  }
  static is(e: unknown): e is RunStateConflictError { return hasName(e, "RunStateConflictError"); }
}

const HTTP_STATUS_BY_CODE: Record<string, number> = {
  run_not_found: 404,
  workflow_not_found: 404,
  invalid_input: 422,
  unauthorized: 401,
  run_state_conflict: 409,
};

/** The HTTP status for an error: the only mapping of codes to statuses. Anything else is 500. */
export function httpStatusOf(e: unknown): number {
  return (DurableError.is(e) && HTTP_STATUS_BY_CODE[e.code]) || 500;
}

/** The body of every HTTP error answer. Errors outside the taxonomy never leak their message. */
export function errorBody(e: unknown): { error: { code: string; message: string } } {
  if (DurableError.is(e)) return { error: { code: e.code, message: e.message } };
  return { error: { code: "internal", message: "internal error" } };
}

/**
 * A step's or run's error as stored in the database. A taxonomy error keeps its code; any other
 * error (also from another realm) gets code `"error"`; a thrown non-error becomes `String(value)`.
 * NUL characters, which Postgres text and jsonb refuse, are replaced with U+FFFD.
 */
export function serializeError(e: unknown): { code: string; message: string; name: string } {
  const clean = (s: string) => s.replace(/\u0000/g, "\uFFFD");
  if (DurableError.is(e)) return { code: e.code, message: clean(e.message), name: e.name };
  if (typeof e === "object" && e !== null && typeof (e as Error).message === "string") {
    const name = (e as Error).name;
    return { code: "error", message: clean((e as Error).message), name: typeof name === "string" ? clean(name) : "Error" };
  }
  let message: string;
  try {
    message = String(e);
  } catch {
    message = Object.prototype.toString.call(e);
  }
  return { code: "error", message: clean(message), name: "NonError" };
}
