"use client";
import type { ReactNode } from "react";
import type { RunStatus } from "@/lib/durable";
import { cancelRun, decide, decideOutline, retryRun, settlePayment } from "../actions";
import { ActionForm } from "./action-form";
import { formatRelative, formatTimestamp } from "./format";
import { SubmitButton } from "./submit-button";

/** What the run waits for, in words, with the demo's way to answer a signal. */
export function WaitingPanel({ run, now, onChange }: { run: RunStatus; now: number | null; onChange: () => void }) {
  const wait = run.waitingFor;
  const when = run.wakeAt && now !== null ? formatRelative(run.wakeAt, now) : null;
  let text: ReactNode;
  let controls: ReactNode = null;

  if (run.status === "pending") {
    text = (
      <>Due now: the next invocation claims it (a status poll from this page, a start, a signal or the cron tick).</>
    );
  } else if (run.status === "running") {
    const retry = run.steps.find((s) => s.status === "waiting" && s.error && (s.kind === "run" || s.kind === "tx"));
    text = retry ? (
      <>
        Running: <code>{retry.id}</code> failed and is retried in this invocation (attempt {retry.attempt + 1} next,
        same external key).
      </>
    ) : (
      <>Running: an invocation holds its lease and is executing steps.</>
    );
  } else if (wait?.kind === "signal") {
    text = <SignalWait name={wait.name} wakeAt={run.wakeAt} when={when} />;
    controls = <SignalControls name={wait.name} runId={run.id} onChange={onChange} />;
  } else if (wait?.kind === "sleep") {
    text = (
      <>
        Sleeping in <code>{wait.name}</code>
        {run.wakeAt ? (
          <>
            {" "}
            until <span className="nowrap">{formatTimestamp(run.wakeAt)}</span>
            {when ? <> ({when})</> : null}
          </>
        ) : null}
        .
      </>
    );
  } else if (wait?.kind === "poll") {
    text = (
      <>
        Polling <code>{wait.name}</code> until it is ready{when ? <>; next poll {when}</> : null}.
      </>
    );
  } else if (wait?.kind === "any" || wait?.kind === "run" || wait?.kind === "callback") {
    text = <ComposedWait run={run} />;
  } else if (wait?.kind === "retry") {
    text = (
      <>
        Step <code>{wait.name}</code> failed; it retries{when ? <> {when}</> : null}, with the same external key.
      </>
    );
  } else {
    return null;
  }

  return (
    <section className={`panel waiting-panel waiting-${run.status}`} data-testid="waiting">
      <h2>{run.status === "waiting" ? "Waiting for" : "Now"}</h2>
      <p>{text}</p>
      {controls}
    </section>
  );
}

/** A wait for a signal, in words: until when, and what wakes it. */
function SignalWait({ name, wakeAt, when }: { name: string; wakeAt: string | null; when: string | null }) {
  return (
    <>
      Waiting for the signal <code>{name}</code>
      {wakeAt ? (
        <>
          {" "}
          until <span className="nowrap">{formatTimestamp(wakeAt)}</span>
          {when ? <> ({when})</> : null}; then it times out
        </>
      ) : null}
      . No process holds the run meanwhile; a webhook to <code>POST /api/durable/signal</code> wakes it.
    </>
  );
}

/** The demo's way to answer the signal its run waits for, if it has one. */
function SignalControls({ name, runId, onChange }: { name: string; runId: string; onChange: () => void }) {
  if (name === "decision") return <ApproveOrReject action={decide} label="Approve" runId={runId} onChange={onChange} />;
  if (name === "outline") {
    return <ApproveOrReject action={decideOutline} label="Approve outline" runId={runId} onChange={onChange} />;
  }
  if (name !== "payment.settled") return null;
  return (
    <ActionForm action={settlePayment} runId={runId} onDone={onChange}>
      <SubmitButton className="button button-primary" pendingLabel="Settling…">
        Settle at the payment provider (sends the webhook)
      </SubmitButton>
    </ActionForm>
  );
}

/** Approve and Reject: the form sends `approved` as true or false. */
function ApproveOrReject({
  action,
  label,
  runId,
  onChange,
}: {
  action: typeof decide;
  label: string;
  runId: string;
  onChange: () => void;
}) {
  return (
    <ActionForm action={action} runId={runId} onDone={onChange}>
      <SubmitButton className="button button-primary" name="approved" value="true" pendingLabel="Approving…">
        {label}
      </SubmitButton>
      <SubmitButton name="approved" value="false" pendingLabel="Rejecting…">
        Reject
      </SubmitButton>
    </ActionForm>
  );
}

/**
 * A wait on other runs or on a race, in words (docs/guide/dashboard.md, "Composition on the run
 * page"): the timeline shows each branch and the child runs' statuses.
 */
function ComposedWait({ run }: { run: RunStatus }) {
  const wait = run.waitingFor!;
  const children = run.steps.filter((step) => step.kind === "invoke" && step.status === "waiting");
  if (wait.kind === "run") {
    return (
      <>
        Waiting for {children.length > 1 ? `${children.length} child runs to end` : "a child run to end"}
        {children.length === 1 && children[0]!.childId ? (
          <>
            {" "}
            (<code>{children[0]!.childId}</code>)
          </>
        ) : null}
        . Nothing runs meanwhile: each child's end makes this run due in the same transaction.
      </>
    );
  }
  const race = run.steps.find((step) => step.id === wait.name);
  const names = race?.branches?.map((branch) => branch.name) ?? [];
  return (
    <>
      {wait.kind === "callback" ? "Waiting for a delivery to a callback URL" : "Racing"} <code>{wait.name}</code>
      {names.length > 1 ? <>: the first of {names.join(", ")} wins, decided in one write</> : null}. No process holds
      the run meanwhile.
    </>
  );
}

/** What can be done to the run: cancel one not finished, retry a failed one; nothing once completed or cancelled. */
export function RunActions({ run, onChange }: { run: RunStatus; onChange: () => void }) {
  if (run.status === "completed" || run.status === "cancelled") return null;
  const failed = run.status === "failed";
  return (
    <section className="panel" data-testid="run-actions">
      <h2>Actions</h2>
      {failed ? (
        <ActionForm action={retryRun} runId={run.id} onDone={onChange}>
          <SubmitButton pendingLabel="Retrying…">Retry</SubmitButton>
        </ActionForm>
      ) : (
        <ActionForm
          action={cancelRun}
          runId={run.id}
          onDone={onChange}
          confirm={`Cancel run ${run.id}? Its steps stop at their next write.`}
        >
          <SubmitButton className="button button-danger" pendingLabel="Cancelling…">
            Cancel run
          </SubmitButton>
        </ActionForm>
      )}
      <p className="muted small">
        {failed
          ? "Retry keeps every completed receipt and external key; failed steps run again."
          : "Cancel moves the fence on: the current owner's next write is refused and its abortSignal fires."}
      </p>
    </section>
  );
}
