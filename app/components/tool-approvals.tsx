"use client";
import { useContext } from "react";
import type { PendingToolApproval } from "@/lib/durable/ai";
import { answerToolCall } from "../actions";
import { ActionForm } from "./action-form";
import { RunContext } from "./run-view";
import { SubmitButton } from "./submit-button";

/**
 * The run's agent tool calls that wait for a person (`toolApprovals(durable, runId)`, read by the
 * server): each call's tool and input, with Approve and Deny (signal `tool-approval`). Plain forms
 * before the page hydrates, as the other run page actions are; after an answer the page's poller
 * reads the run again (RunContext), and the page re-renders this list from the server.
 */
export function ToolApprovals({ runId, approvals }: { runId: string; approvals: PendingToolApproval[] }) {
  const page = useContext(RunContext);
  if (approvals.length === 0) return null;
  return (
    <section className="panel waiting-panel" data-testid="tool-approvals">
      <h2>{approvals.length === 1 ? "A tool call waits" : `${approvals.length} tool calls wait`} for approval</h2>
      <p className="small muted">
        The run is parked on signal <code>tool-approval</code>: nothing runs until a person answers. A denied call is
        told to the model as denied.
      </p>
      {approvals.map((call) => (
        <div key={`${call.turnId}/${call.toolCallId}`} className="tool-approval" data-tool-call-id={call.toolCallId}>
          <p>
            <code className="chat-tool-name">{call.toolName}</code>{" "}
            <span className="small muted">
              call <code>{call.toolCallId}</code> of <code>{call.turnId}</code>
            </span>
          </p>
          <pre className="json">{JSON.stringify(call.input, null, 2)}</pre>
          <ActionForm action={answerToolCall} runId={runId} onDone={page?.refresh ?? noop}>
            <input type="hidden" name="toolCallId" value={call.toolCallId} />
            <input type="hidden" name="turnId" value={call.turnId} />
            <SubmitButton className="button button-primary" name="approved" value="true" pendingLabel="Approving…">
              Approve
            </SubmitButton>
            <SubmitButton name="approved" value="false" pendingLabel="Denying…">
              Deny
            </SubmitButton>
          </ActionForm>
        </div>
      ))}
    </section>
  );
}

const noop = () => {};
