// The approvals' own error (docs/guide/approvals.md). It lives beside them, not in errors.ts (at
// its line cap); errors.ts lists its name, so `DurableError.is` accepts it and
// http/error-response.ts maps its code.
import { DurableError, type DurableErrorOptions } from "../errors";

/**
 * Thrown by `durable.decide()` when the workflow's `approvers(actor, input)` check refuses the
 * actor. HTTP 403. Nothing was recorded.
 */
export class NotAnApproverError extends DurableError {
  constructor(message: string, options?: DurableErrorOptions) {
    super("not_an_approver", message, options);
    this.name = "NotAnApproverError";
  }
  static is(e: unknown): e is NotAnApproverError {
    return typeof e === "object" && e !== null && (e as { name?: unknown }).name === "NotAnApproverError";
  }
}
