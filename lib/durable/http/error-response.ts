import { DurableError, RunStateConflictError } from "../errors";

// The one place error codes map to HTTP statuses (docs/decisions.md, "Errors").
const HTTP_STATUS_BY_CODE: Record<string, number> = {
  run_not_found: 404,
  callback_not_found: 404,
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
export function errorBody(e: unknown): { error: { code: string; message: string; activeRunId?: string } } {
  if (RunStateConflictError.is(e) && e.activeRunId !== undefined) {
    return { error: { code: e.code, message: e.message, activeRunId: e.activeRunId } };
  }
  if (DurableError.is(e)) return { error: { code: e.code, message: e.message } };
  return { error: { code: "internal", message: "internal error" } };
}
