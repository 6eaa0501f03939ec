"use client";
import { useActionState } from "react";
import { signIn } from "../dashboard-actions";
import { SubmitButton } from "./submit-button";

/**
 * What a dashboard page shows in production to a request that may not operate it: nothing of the
 * runs, only this form. A plain HTML form before hydration (or without JavaScript).
 */
export function DashboardSignIn({ next }: { next: string }) {
  const [result, action] = useActionState(signIn, null);
  return (
    <section className="panel notice sign-in" data-testid="sign-in">
      <h1>Sign in to the dashboard</h1>
      <p>
        The dashboard acts as the admin: it starts, signals, cancels, retries and forks any run. Sign in with the admin
        secret (<code>DURABLE_SECRET</code>), or let your app decide who may (<code>app/dashboard-auth.ts</code>).
      </p>
      <form action={action} className="sign-in-form">
        <input type="hidden" name="next" value={next} />
        <label htmlFor="dashboard-secret">Admin secret</label>
        <input
          id="dashboard-secret"
          name="secret"
          type="password"
          autoComplete="current-password"
          required
          className="text-input"
        />
        <SubmitButton className="button button-primary" pendingLabel="Signing in…">
          Sign in
        </SubmitButton>
      </form>
      {result ? (
        <p className="action-message action-error" role="alert">
          {result.message}
        </p>
      ) : null}
    </section>
  );
}
