import { DurableError, RunStateConflictError } from "../errors";

// The one place error codes map to HTTP statuses (docs/decisions.md, "Errors").
const HTTP_STATUS_BY_CODE: Record<string, number> = {
  run_not_found: 404,
  callback_not_found: 404,
  workflow_not_found: 404,
  invalid_input: 422,
  unauthorized: 401,
  not_an_approver: 403,
  run_state_conflict: 409,
};

// Faults of the deployment, not of the request: a secret unset in production (auth/secrets.ts),
// the embedded database held by another process (drivers/data-dir-lock.ts). Matched by name, like
// the taxonomy, so a copy from another bundle counts too; answered 503 with the error's own words,
// which name the variable to set or the process to stop, never a secret's value.
const UNAVAILABLE_CODE_BY_NAME: Readonly<Record<string, string>> = {
  MissingSecretError: "secret_missing",
  DataDirInUseError: "database_in_use",
};

/** The code of a deployment fault (answered 503 with its message), else undefined. */
export function unavailableCode(e: unknown): string | undefined {
  const name = typeof e === "object" && e !== null ? (e as { name?: unknown }).name : undefined;
  return typeof name === "string" && Object.hasOwn(UNAVAILABLE_CODE_BY_NAME, name)
    ? UNAVAILABLE_CODE_BY_NAME[name]
    : undefined;
}

/** The HTTP status for an error: the only mapping of codes to statuses. Anything else is 500. */
export function httpStatusOf(e: unknown): number {
  if (unavailableCode(e) !== undefined) return 503;
  return (DurableError.is(e) && HTTP_STATUS_BY_CODE[e.code]) || 500;
}

/** The body of every HTTP error answer. Errors outside the taxonomy never leak their message. */
export function errorBody(e: unknown): { error: { code: string; message: string; activeRunId?: string } } {
  if (RunStateConflictError.is(e) && e.activeRunId !== undefined) {
    return { error: { code: e.code, message: e.message, activeRunId: e.activeRunId } };
  }
  if (DurableError.is(e)) return { error: { code: e.code, message: e.message } };
  const unavailable = unavailableCode(e);
  if (unavailable !== undefined) return { error: { code: unavailable, message: (e as Error).message } };
  return { error: { code: "internal", message: "internal error" } };
}
