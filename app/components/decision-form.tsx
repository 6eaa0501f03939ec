"use client";
import { useRouter } from "next/navigation";
import { useActionState, useEffect, useRef } from "react";
import type { ActionResult } from "../actions";
import { decideApproval } from "../approval-actions";
import { SubmitButton } from "./submit-button";

/**
 * One approval's decision on the inbox (a signal's, or an agent's tool call's): who decides, why,
 * and Approve or Reject. After an answer the page is read again, so a decided wait leaves the list
 * and a partial one shows its count.
 */
export function DecisionForm({
  runId,
  name,
  toolCallId,
  turnId,
}: {
  runId: string;
  name: string;
  /** An agent's tool call: the call decided, and its turn. */
  toolCallId?: string | undefined;
  turnId?: string | undefined;
}) {
  const router = useRouter();
  const [result, formAction] = useActionState(decideApproval, null as ActionResult | null);
  const shown = useRef(result);
  useEffect(() => {
    if (result === shown.current) return;
    shown.current = result;
    router.refresh();
  }, [result, router]);
  return (
    <form action={formAction} className="decision-form" data-testid="decision-form">
      <input type="hidden" name="runId" value={runId} />
      <input type="hidden" name="name" value={name} />
      {toolCallId ? <input type="hidden" name="toolCallId" value={toolCallId} /> : null}
      {turnId ? <input type="hidden" name="turnId" value={turnId} /> : null}
      <label className="field">
        <span>Your name</span>
        <input name="actor" className="text-input" required maxLength={100} autoComplete="name" />
      </label>
      <label className="field">
        <span>Reason</span>
        <input name="reason" className="text-input" maxLength={2000} />
      </label>
      <div className="button-row">
        <SubmitButton name="verdict" value="approve" className="button button-primary" pendingLabel="Approving…">
          Approve
        </SubmitButton>
        <SubmitButton name="verdict" value="reject" className="button button-danger" pendingLabel="Rejecting…">
          Reject
        </SubmitButton>
      </div>
      {result ? (
        <p className={result.ok ? "action-message" : "action-message action-error"} role="status">
          {result.message}
        </p>
      ) : null}
    </form>
  );
}
