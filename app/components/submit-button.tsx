"use client";
import type { ReactNode } from "react";
import { useFormStatus } from "react-dom";

/** A form's submit button that says what it is doing while the server action runs. */
export function SubmitButton({
  children,
  pendingLabel,
  className = "button",
  name,
  value,
}: {
  children: ReactNode;
  pendingLabel: string;
  className?: string;
  name?: string;
  value?: string;
}) {
  const { pending } = useFormStatus();
  return (
    <button type="submit" className={className} disabled={pending} aria-busy={pending} name={name} value={value}>
      {pending ? pendingLabel : children}
    </button>
  );
}
