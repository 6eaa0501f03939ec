// What a new run is before it is inserted: the workflow's newest version, the parsed input as
// stored JSON, its keys and its deadline. `start`, `startMany`, `ctx.step.invoke` and
// `ctx.step.start` all prepare a run here, so each refuses the same bad input the same way.
import { InvalidInputError, WorkflowNotFoundError } from "../errors";
import { toBoundedMs } from "../duration";
import { toJsonText } from "../json";
import { isStorableName, storableName } from "../names";
import type { RunToInsert } from "../store";
import type { AnyWorkflow, Duration } from "../types";
import { storedVersion, versionKey, type WorkflowRegistry } from "./define-workflow";
import { flowFieldsOf } from "./flow-control";
import { isWebhookDelivery, WEBHOOK_WORKFLOW } from "./webhooks";

/** A run ready to insert, and the milliseconds to its deadline (null: none). */
export interface PreparedRun extends RunToInsert {
  deadlineInMs: number | null;
}

/** Prepares a run of `workflow` (on its newest registered version) with `input` under `id`. */
export function prepareRun(
  registry: WorkflowRegistry,
  maxResultBytes: number,
  workflow: AnyWorkflow,
  input: unknown,
  id: string,
  deadline?: Duration,
  priority?: number,
): PreparedRun {
  if (registry.byVersion.get(versionKey(workflow?.name, storedVersion(workflow?.version))) !== workflow) {
    throw new WorkflowNotFoundError(String(workflow?.name));
  }
  // Whichever version the caller names, a new run starts on the newest.
  const newest = registry.newest.get(workflow.name)!;
  if (isWebhookDelivery(newest)) {
    // A delivery is signed with the endpoint's secret: only a run's end, in the database, starts one.
    throw new InvalidInputError(
      `workflow "${WEBHOOK_WORKFLOW}" is started only when a run ends (docs/guide/lifecycle.md, "Webhooks")`,
    );
  }
  const runId = storableName(id, "a run id");
  const parsed = newest.input.safeParse(input);
  if (!parsed.success) {
    throw new InvalidInputError(`the input of workflow "${newest.name}" is invalid`, {
      issues: parsed.error.issues,
    });
  }
  const ownDeadline =
    newest.deadline === undefined ? null : toBoundedMs(newest.deadline, `workflow "${newest.name}" deadline`);
  const givenDeadline = deadline === undefined ? null : toBoundedMs(deadline, "deadline");
  return {
    id: runId,
    workflow: newest.name,
    inputJson: toJsonText(parsed.data, { limit: maxResultBytes }),
    version: storedVersion(newest.version),
    concurrencyKey: keyOf(newest, "concurrency", parsed.data),
    singletonKey: keyOf(newest, "singleton", parsed.data),
    deadlineInMs: earlier(ownDeadline, givenDeadline),
    ...flowFieldsOf(newest, parsed.data, priority),
    followups: registry.followups.get(newest.name) ?? null,
  };
}

const earlier = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));

/** Computes a run's concurrency or singleton key from its parsed input: a storable string. */
function keyOf(workflow: AnyWorkflow, option: "concurrency" | "singleton", input: unknown): string | null {
  const keyFn = workflow[option]?.key as ((input: unknown) => unknown) | undefined;
  if (!keyFn) return null;
  const key = keyFn(input);
  if (typeof key !== "string" || !isStorableName(key)) {
    throw new InvalidInputError(
      `workflow "${workflow.name}": ${option}.key must return a string of 1 to 255 characters, ` +
        "without NUL or a lone surrogate",
    );
  }
  return key;
}
