"use client";
import { useRouter } from "next/navigation";
import { useActionState, useEffect, useRef, type ReactNode } from "react";
import type { ActionResult } from "../actions";

type FormAction = (previous: ActionResult | null, form: FormData) => Promise<ActionResult>;

/**
 * A form that sends one of the run's server actions (app/actions.ts) with the run id. It is a
 * plain HTML form until the page hydrates (the browser posts it and the server answers with the
 * page and the action's message), and a transition after: the message shows, and the run's
 * status and the server panels are read again at once rather than at the next poll.
 */
export function ActionForm({
  action,
  runId,
  onDone,
  confirm,
  children,
}: {
  action: FormAction;
  runId: string;
  /** Called after each answer, in the browser: the page's poller reads the status again. */
  onDone: () => void;
  /** Asked before sending, once the page has hydrated (a plain form sends without asking). */
  confirm?: string;
  children: ReactNode;
}) {
  const router = useRouter();
  const [result, formAction] = useActionState(action, null);
  const shown = useRef(result);
  useEffect(() => {
    if (result === shown.current) return;
    shown.current = result;
    onDone();
    router.refresh();
  }, [result, onDone, router]);
  return (
    <form
      action={formAction}
      onSubmit={(event) => {
        if (confirm && !window.confirm(confirm)) event.preventDefault();
      }}
    >
      <input type="hidden" name="runId" value={runId} />
      <div className="button-row">{children}</div>
      {result ? (
        <p className={result.ok ? "action-message" : "action-message action-error"} role="status">
          {result.message}
        </p>
      ) : null}
    </form>
  );
}
