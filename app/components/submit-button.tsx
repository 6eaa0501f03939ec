"use client";
import type { ReactNode } from "react";
import { useFormStatus } from "react-dom";

/**
 * A form's submit button that says what it is doing while the server action runs. Every button
 * of the form is disabled meanwhile; only the one pressed (its `name` and `value` are in the data
 * sent) shows `pendingLabel`.
 */
export function SubmitButton({
  children,
  pendingLabel,
  className = "button",
  name,
  value,
  label,
}: {
  children: ReactNode;
  pendingLabel: string;
  className?: string;
  name?: string;
  value?: string;
  /** The button's accessible name, when its text alone would not tell which one it is. */
  label?: string;
}) {
  const { pending, data } = useFormStatus();
  const pressed = pending && (name === undefined || data?.get(name) === value);
  return (
    <button
      type="submit"
      className={className}
      disabled={pending}
      aria-busy={pressed}
      aria-label={label}
      name={name}
      value={value}
    >
      {pressed ? pendingLabel : children}
    </button>
  );
}
