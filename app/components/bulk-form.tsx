"use client";
import { useRouter } from "next/navigation";
import { type ChangeEvent, type ReactNode, useActionState, useEffect, useRef, useState } from "react";
import { type BulkState, bulkRuns } from "../operations-actions";
import { SubmitButton } from "./submit-button";

const plural = (n: number) => `${n} run${n === 1 ? "" : "s"}`;

/**
 * The runs list as one form (docs/guide/dashboard.md, "Operating many runs"): a box on each row
 * (`select`), "Select all on this page", and Cancel and Retry. Pressing one asks the server to
 * confirm, which answers with the count and the ids it will act on; only "Yes" acts, on exactly
 * those ids, and the answer says `{ matched, changed }`. Before hydration it is a plain form and
 * the confirmation a page of its own; after, the buttons count the boxes as they are ticked.
 */
export function BulkForm({ children }: { children: ReactNode }) {
  const router = useRouter();
  const form = useRef<HTMLFormElement>(null);
  const [state, action] = useActionState<BulkState | null, FormData>(bulkRuns, null);
  const [selected, setSelected] = useState(0);
  const shown = useRef(state);
  // The boxes ticked when the form was sent: React resets a form after its action, and the ticks
  // stay while the confirmation is open, or after "No" or a refusal; only a done action clears them.
  const kept = useRef<string[]>([]);

  useEffect(() => {
    if (state === shown.current) return;
    shown.current = state;
    if (state?.phase === "done") {
      kept.current = [];
      router.refresh();
    }
    const boxes = boxesOf(form.current);
    for (const box of boxes) box.checked = kept.current.includes(box.value);
    const count = boxes.filter((box) => box.checked).length;
    syncAll(form.current, count);
    setSelected(count);
  }, [state, router]);

  const onChange = (event: ChangeEvent<HTMLFormElement>) => {
    const target = event.target as unknown as HTMLInputElement;
    if (target.name !== "select" && target.name !== "select-all") return;
    const boxes = boxesOf(form.current);
    if (target.name === "select-all") for (const box of boxes) box.checked = target.checked;
    const count = boxes.filter((box) => box.checked).length;
    syncAll(form.current, count);
    setSelected(count);
  };

  const counted = selected > 0 ? ` (${selected})` : "";
  return (
    <form
      ref={form}
      action={action}
      onChange={onChange}
      onSubmit={() => {
        kept.current = boxesOf(form.current)
          .filter((box) => box.checked)
          .map((box) => box.value);
      }}
      className="bulk-form"
      data-testid="bulk-form"
    >
      <div className="bulk-bar">
        <label className="bulk-all">
          <input type="checkbox" name="select-all" /> Select all on this page
        </label>
        <div className="bulk-buttons">
          <SubmitButton className="button button-danger" name="operation" value="cancel" pendingLabel="Checking…">
            Cancel selected{counted}
          </SubmitButton>
          <SubmitButton className="button" name="operation" value="retry" pendingLabel="Checking…">
            Retry selected{counted}
          </SubmitButton>
        </div>
      </div>
      <BulkMessage state={state} />
      {children}
    </form>
  );
}

function boxesOf(form: HTMLFormElement | null): HTMLInputElement[] {
  return form ? [...form.querySelectorAll<HTMLInputElement>('input[type="checkbox"][name="select"]')] : [];
}

/** "Select all" ticked when every box is, half-ticked when some are. */
function syncAll(form: HTMLFormElement | null, count: number) {
  const all = form?.querySelector<HTMLInputElement>('input[name="select-all"]');
  if (!all) return;
  const total = boxesOf(form).length;
  all.checked = total > 0 && count === total;
  all.indeterminate = count > 0 && count < total;
}

/** The confirmation step, or what the last action did. */
function BulkMessage({ state }: { state: BulkState | null }) {
  if (state === null) return null;
  if (state.phase === "refused") {
    return (
      <p className="action-message action-error bulk-message" role="status">
        {state.message}
      </p>
    );
  }
  if (state.phase === "done") {
    return (
      <p
        className="action-message bulk-message"
        role="status"
        data-testid="bulk-result"
        data-matched={state.matched}
        data-changed={state.changed}
      >
        {state.message}
      </p>
    );
  }
  const cancel = state.operation === "cancel";
  return (
    <div
      className="panel bulk-confirm"
      role="alertdialog"
      aria-labelledby="bulk-confirm-title"
      data-testid="bulk-confirm"
    >
      <h2 id="bulk-confirm-title">
        {cancel ? "Cancel" : "Retry"} {plural(state.ids.length)}?
      </h2>
      <p className="small">
        {cancel
          ? "Each one not finished is cancelled under its own fence: its owner's next write is refused and its " +
            "abortSignal fires; its children are cancelled too. Finished runs stay as they are."
          : "Each failed one runs again, keeping its completed receipts and external keys; the others stay " +
            "as they are."}
      </p>
      {state.ids.map((id) => (
        <input key={id} type="hidden" name="confirmId" value={id} />
      ))}
      <div className="button-row">
        <SubmitButton
          className={cancel ? "button button-primary button-danger-solid" : "button button-primary"}
          name="confirm"
          value={state.operation}
          pendingLabel={cancel ? "Cancelling…" : "Retrying…"}
        >
          Yes, {cancel ? "cancel" : "retry"} {plural(state.ids.length)}
        </SubmitButton>
        <SubmitButton className="button" name="back" value="1" pendingLabel="…">
          No, keep them
        </SubmitButton>
      </div>
    </div>
  );
}
