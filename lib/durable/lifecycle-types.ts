// The types of lifecycle hooks (docs/guide/lifecycle.md): what defineWorkflow({ onComplete,
// onFailure }) takes. A leaf of the vocabulary, as signal-types.ts is: it imports nothing of the
// toolkit, so types.ts (at its line cap) can extend it. The webhooks' types are in
// engine/webhooks.ts.

/** A workflow a hook starts: the workflow itself, or its name (registered on the same instance). */
export type LifecycleHookTarget = string | { readonly name: string };

export interface LifecycleHooks {
  /**
   * Started as a run, child of this one, in the transaction that completes a run of this workflow,
   * with `{ id, workflow, status: "completed", output }` as its input (`lifecycleInput` parses it).
   * Not for a run that continues as new: its successor carries the hook to the chain's end.
   */
  onComplete?: LifecycleHookTarget;
  /**
   * Started as a run in the transaction that fails or cancels a run of this workflow, with
   * `{ id, workflow, status: "failed" | "cancelled", error }` as its input.
   */
  onFailure?: LifecycleHookTarget;
}
