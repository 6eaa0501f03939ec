// The types of callback URLs the facade answers (docs/guide/composition.md, "Callback URLs"):
// what `completeCallback` answers and what `callbacks(runId)` lists. durable-api.ts re-exports them.

/** What `completeCallback` answers. */
export interface CallbackResult {
  ok: true;
  /** This call delivered it. */
  delivered: boolean;
  /** A repeat of the delivery that resolved it (same idempotency key): nothing changed. */
  alreadyDelivered: boolean;
  /** The run the callback belongs to. */
  runId: string;
}

/**
 * A callback URL a run made, as `callbacks(runId)` lists it for an operator's page: never part of
 * RunStatus, since the URL is a capability for the third party it was made for.
 */
export interface RunCallback {
  /** The callback's id (a `waitForAny` callback branch's target in RunStatus). */
  id: string;
  /** The `ctx.step.callback` step that made it. */
  stepId: string;
  /** `<origin>/api/durable/callback/<token>`: POST a JSON body to it. */
  url: string;
  /** The capability in the URL, for `completeCallback(token, payload)`. */
  token: string;
  /** Past it the URL accepts nothing (its `timeout`); null: none. */
  deadlineAt: Date | null;
  /** When its first delivery arrived; null: not yet. */
  deliveredAt: Date | null;
}
