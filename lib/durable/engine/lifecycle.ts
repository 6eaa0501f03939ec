// Lifecycle hooks (docs/guide/lifecycle.md): what a run's end starts. defineWorkflow checks a
// workflow's onComplete / onFailure; the instance resolves them, with its webhooks, into the
// `followups` each new run of a workflow stores (store/insert-run.ts), which the trigger
// durable_runs_followups reads when the run ends (docs/sql.md, "Follow-ups").
import * as z from "zod";
import { InvalidInputError } from "../errors";
import type { Followups, FollowupTarget } from "../store";
import { hookName, storedVersion, type WorkflowRegistry } from "./define-workflow";
import { isWebhookDelivery, STATUS_OF_EVENT, type WebhookEvent } from "./webhooks";
import { toBoundedMs } from "../duration";

/**
 * The input of a run that onComplete or onFailure started: the ended run's id, workflow, status,
 * and its output (completed) or its stored error (failed, cancelled).
 *
 * @example
 * const notify = defineWorkflow({ name: "notify", input: lifecycleInput, async run(ctx, ended) { … } });
 */
export const lifecycleInput = z.object({
  id: z.string(),
  workflow: z.string(),
  status: z.enum(["completed", "failed", "cancelled"]),
  output: z.unknown().optional(),
  error: z.object({ code: z.string(), message: z.string() }).passthrough().nullable().optional(),
});

export type LifecycleInput = z.output<typeof lifecycleInput>;

/** Options a hook's workflow may not declare: its runs are inserted by SQL, where no key function runs. */
const KEYED_OPTIONS = ["concurrency", "singleton", "rateLimit", "debounce", "priority"] as const;

/** Checks that `name` is a workflow the instance registered that SQL can start, and names it as a target. */
function workflowTarget(registry: WorkflowRegistry, owner: string, hook: string, name: string): FollowupTarget {
  const target = registry.newest.get(name);
  if (!target || isWebhookDelivery(target)) {
    throw new InvalidInputError(
      `workflow "${owner}": ${hook} names workflow "${name}", which this instance does not register`,
    );
  }
  const keyed = KEYED_OPTIONS.find((option) => target[option] !== undefined);
  if (keyed) {
    throw new InvalidInputError(
      `workflow "${name}" is ${owner}'s ${hook} but declares ${keyed}: a hook's run is started by ` +
        "the database when a run ends, where no key function runs",
    );
  }
  const deadline = target.deadline === undefined ? null : toBoundedMs(target.deadline);
  return { workflow: name, version: storedVersion(target.version), deadline_in_ms: deadline };
}

/**
 * What a new run of each workflow starts when it ends, by workflow name (absent: nothing): its
 * newest version's hooks and every webhook whose events include the end. The hooks' workflows get
 * webhooks too, for the runs a start starts; the runs the trigger starts (hooks, deliveries) have
 * none (no loop of hooks), and the delivery workflow is never started otherwise.
 */
export function followupsByWorkflow(
  registry: WorkflowRegistry,
  webhooks: ReadonlyArray<{ url: string; events: readonly WebhookEvent[] }>,
): Map<string, Followups> {
  const byName = new Map<string, Followups>();
  for (const workflow of registry.newest.values()) {
    if (isWebhookDelivery(workflow)) continue;
    const followups: Followups = {};
    const add = (status: keyof Followups, target: FollowupTarget) => {
      followups[status] = [...(followups[status] ?? []), target];
    };
    const { onComplete, onFailure } = workflow;
    if (onComplete !== undefined)
      add("completed", workflowTarget(registry, workflow.name, "onComplete", hookName(onComplete)!));
    if (onFailure !== undefined) {
      const target = workflowTarget(registry, workflow.name, "onFailure", hookName(onFailure)!);
      add("failed", target);
      add("cancelled", target);
    }
    for (const webhook of webhooks) {
      for (const event of webhook.events) add(STATUS_OF_EVENT[event], { webhook: webhook.url });
    }
    if (Object.keys(followups).length > 0) byName.set(workflow.name, followups);
  }
  return byName;
}
