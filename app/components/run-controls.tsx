"use client";
import { useRouter } from "next/navigation";
import { useState, useTransition, type ReactNode } from "react";
import type { RunStatus } from "@/lib/durable";
import { cancelRun, decide, retryRun, settlePayment, type ActionResult } from "../actions";
import { formatRelative, formatTimestamp } from "./format";

function useAction(onDone: () => void) {
  const router = useRouter();
  const [pending, startTransition] = useTransition();
  const [result, setResult] = useState<ActionResult | null>(null);
  const run = (action: () => Promise<ActionResult>) =>
    startTransition(async () => {
      setResult(await action());
      onDone();
      router.refresh();
    });
  return { pending, result, run };
}

function ActionMessage({ result }: { result: ActionResult | null }) {
  if (!result) return null;
  return (
    <p className={result.ok ? "action-message" : "action-message action-error"} role="status">
      {result.message}
    </p>
  );
}

/** What the run waits for, in words, with the demo's way to answer a signal. */
export function WaitingPanel({ run, now, onChange }: { run: RunStatus; now: number | null; onChange: () => void }) {
  const { pending, result, run: act } = useAction(onChange);
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
    text = (
      <>
        Waiting for the signal <code>{wait.name}</code>
        {run.wakeAt ? (
          <>
            {" "}
            until {formatTimestamp(run.wakeAt)}
            {when ? <> ({when})</> : null}; then it times out
          </>
        ) : null}
        . No process holds the run meanwhile; a webhook to <code>POST /api/durable/signal</code> wakes it.
      </>
    );
    if (wait.name === "decision") {
      controls = (
        <div className="button-row">
          <button
            type="button"
            className="button button-primary"
            disabled={pending}
            onClick={() => act(() => decide(run.id, true))}
          >
            Approve
          </button>
          <button type="button" className="button" disabled={pending} onClick={() => act(() => decide(run.id, false))}>
            Reject
          </button>
        </div>
      );
    } else if (wait.name === "payment.settled") {
      controls = (
        <div className="button-row">
          <button
            type="button"
            className="button button-primary"
            disabled={pending}
            onClick={() => act(() => settlePayment(run.id))}
          >
            Settle at the payment provider (sends the webhook)
          </button>
        </div>
      );
    }
  } else if (wait?.kind === "sleep") {
    text = (
      <>
        Sleeping in <code>{wait.name}</code>
        {run.wakeAt ? (
          <>
            {" "}
            until {formatTimestamp(run.wakeAt)}
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
      {pending ? <p className="action-message">Sending…</p> : <ActionMessage result={result} />}
    </section>
  );
}

/** Cancel (a run that is not finished) and retry (a failed run). */
export function RunActions({ run, onChange }: { run: RunStatus; onChange: () => void }) {
  const { pending, result, run: act } = useAction(onChange);
  const terminal = run.status === "completed" || run.status === "failed" || run.status === "cancelled";
  return (
    <section className="panel">
      <h2>Actions</h2>
      <div className="button-row">
        <button
          type="button"
          className="button button-danger"
          disabled={pending || terminal}
          onClick={() => {
            if (window.confirm(`Cancel run ${run.id}? Its steps stop at their next write.`))
              act(() => cancelRun(run.id));
          }}
        >
          Cancel run
        </button>
        <button
          type="button"
          className="button"
          disabled={pending || run.status !== "failed"}
          onClick={() => act(() => retryRun(run.id))}
        >
          Retry
        </button>
      </div>
      <p className="muted small">
        {run.status === "failed"
          ? "Retry keeps every completed receipt and external key; failed steps run again."
          : terminal
            ? "The run is finished: it answers every replay from its receipts."
            : "Cancel moves the fence on: the current owner's next write is refused and its abortSignal fires."}
      </p>
      <ActionMessage result={result} />
    </section>
  );
}
