"use client";
import { type FormEvent, useId, useState } from "react";
import type { RunStatus } from "@/lib/durable";
import { formatRelative, formatTimestamp } from "./format";

type RunStatusValue = RunStatus["status"];

/** A callback as the server hands it to the page (`durable.callbacks(runId)`), its times as ISO strings. */
export interface CallbackView {
  id: string;
  stepId: string;
  url: string;
  deadlineAt: string | null;
  deliveredAt: string | null;
}

const TERMINAL = new Set<RunStatusValue>(["completed", "failed", "cancelled"]);

/**
 * The run's callback URLs (docs/guide/dashboard.md, "Composition on the run page"). The page is
 * the operator's: the server read them as the admin, and they never travel in RunStatus. While a
 * URL can still be delivered it is shown with a Copy button, and in dev (`devForm`) with a form
 * that POSTs a JSON body to it, as the third party would.
 */
export function CallbackPanel({
  callbacks,
  status,
  now,
  devForm,
  onDelivered,
}: {
  callbacks: CallbackView[];
  status: RunStatusValue;
  now: number;
  devForm: boolean;
  onDelivered: () => void;
}) {
  // The route's last answer per callback, kept here: a delivery closes the URL and hides its form.
  const [answers, setAnswers] = useState<Record<string, Answer>>({});
  if (callbacks.length === 0) return null;
  return (
    <section className="panel callback-panel" data-testid="callbacks">
      <h2>Callback URLs</h2>
      {callbacks.map((callback) => {
        const state = stateOf(callback, status, now);
        return (
          <div key={callback.id} className="callback" data-callback={callback.stepId} data-callback-state={state}>
            <p>
              <code>{callback.stepId}</code> · <CallbackState callback={callback} state={state} now={now} />
            </p>
            {state === "open" ? (
              <>
                <CopyableUrl url={callback.url} />
                {devForm ? (
                  <DeliverForm
                    url={callback.url}
                    onAnswer={(answer) => {
                      setAnswers((previous) => ({ ...previous, [callback.id]: answer }));
                      if (answer.ok) onDelivered();
                    }}
                  />
                ) : null}
              </>
            ) : null}
            {answers[callback.id] ? (
              <p
                className={answers[callback.id]!.ok ? "action-message" : "action-message action-error"}
                data-testid="callback-answer"
              >
                {answers[callback.id]!.text}
              </p>
            ) : null}
          </div>
        );
      })}
      <p className="small muted">
        Whoever holds a URL can deliver it, with no other credential: the page reads them on the server as the admin,
        and the run's status (what its status token reads) never carries them.
      </p>
    </section>
  );
}

type CallbackState = "open" | "delivered" | "timed-out" | "closed";

/** What the callback route answered the form: its status and body. */
type Answer = { ok: boolean; text: string };

function stateOf(callback: CallbackView, status: RunStatusValue, now: number): CallbackState {
  if (callback.deliveredAt) return "delivered";
  if (TERMINAL.has(status)) return "closed";
  if (callback.deadlineAt && Date.parse(callback.deadlineAt) <= now) return "timed-out";
  return "open";
}

function CallbackState({ callback, state, now }: { callback: CallbackView; state: CallbackState; now: number }) {
  if (state === "delivered") return <>delivered {formatTimestamp(callback.deliveredAt!)}</>;
  if (state === "closed") return <>closed: the run has ended</>;
  if (state === "timed-out") return <>timed out {formatTimestamp(callback.deadlineAt!)}</>;
  return (
    <span suppressHydrationWarning>
      waiting for a delivery{callback.deadlineAt ? `, until ${formatRelative(callback.deadlineAt, now)}` : ""}
    </span>
  );
}

function CopyableUrl({ url }: { url: string }) {
  const [copied, setCopied] = useState<"yes" | "no" | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(url);
      setCopied("yes");
    } catch {
      setCopied("no");
    }
  };
  return (
    <div className="callback-url-row">
      <code className="callback-url" data-testid="callback-url">
        {url}
      </code>
      <button type="button" className="button" onClick={copy} data-testid="copy-callback-url">
        {copied === "yes" ? "Copied" : "Copy"}
      </button>
      {copied === "no" ? <span className="small muted">The browser refused the clipboard: select the URL.</span> : null}
    </div>
  );
}

/**
 * Dev only: POSTs a JSON body to the URL's path on this page's server, which rendered the URL
 * (its origin is DURABLE_BASE_URL or localhost, which may not be the address this page was opened
 * at), and shows the route's answer.
 */
function DeliverForm({ url, onAnswer }: { url: string; onAnswer: (answer: Answer) => void }) {
  const [body, setBody] = useState('{ "approved": true }');
  const [sending, setSending] = useState(false);
  const fieldId = useId();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSending(true);
    try {
      const response = await fetch(new URL(url).pathname, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      onAnswer({ ok: response.ok, text: `${response.status} ${(await response.text()).slice(0, 300)}` });
    } catch (e) {
      onAnswer({ ok: false, text: (e as Error).message });
    } finally {
      setSending(false);
    }
  };
  return (
    <form className="callback-form" onSubmit={submit} data-testid="callback-form">
      <label className="small muted" htmlFor={fieldId}>
        Dev only: POST a JSON body to it, as the third party would
      </label>
      <textarea
        id={fieldId}
        className="callback-body"
        rows={2}
        value={body}
        onChange={(event) => setBody(event.target.value)}
        spellCheck={false}
      />
      <button type="submit" className="button button-primary" disabled={sending}>
        {sending ? "Sending…" : "POST to the callback URL"}
      </button>
    </form>
  );
}
