import type { z } from "zod";
import { toBoundedMs } from "../duration";
import { InvalidInputError } from "../errors";
import { isStorableName, NAME_RULE } from "../names";
import type { Followups } from "../store";
import type { AnyWorkflow, NoSignals, SignalSchemas, Workflow, WorkflowDefinition } from "../types";
import { validateApprovals } from "./approval-rules";
import { validateFlowControl } from "./flow-control";
import { validateSubscription } from "./subscriptions";
import { validateSchedule } from "./schedules";

/**
 * Declares a workflow: a plain async function whose side effects are named steps.
 *
 * @example
 * const hello = defineWorkflow({
 *   name: "hello",
 *   input: z.object({ name: z.string() }),
 *   async run(ctx, input) {
 *     const greeting = await ctx.step.run("greet", () => `hello ${input.name}`);
 *     return { greeting };
 *   },
 * });
 */
export function defineWorkflow<TInput extends z.ZodType, TOutput, TSignals extends SignalSchemas = NoSignals>(
  definition: WorkflowDefinition<TInput, TOutput, TSignals>,
): Workflow<TInput, TOutput, TSignals> {
  if (!isStorableName(definition.name) || !/^\S/.test(definition.name)) {
    throw new InvalidInputError(`a workflow name is ${NAME_RULE}, starting with a visible character`);
  }
  const { version } = definition;
  if (
    version !== undefined &&
    !(typeof version === "number" && Number.isFinite(version)) &&
    !(typeof version === "string" && isStorableName(version))
  ) {
    throw new InvalidInputError(
      `workflow "${definition.name}": version is a finite number or a string of ${NAME_RULE}`,
    );
  }
  if (typeof definition.run !== "function") {
    throw new InvalidInputError(`workflow "${definition.name}" needs a run(ctx, input) function`);
  }
  const { concurrency, singleton } = definition;
  if (
    concurrency !== undefined &&
    (typeof concurrency?.key !== "function" || !Number.isInteger(concurrency.limit) || concurrency.limit < 1)
  ) {
    throw new InvalidInputError(
      `workflow "${definition.name}": concurrency is { key: (input) => string, limit: a whole number >= 1 }`,
    );
  }
  if (singleton !== undefined && typeof singleton?.key !== "function") {
    throw new InvalidInputError(`workflow "${definition.name}": singleton is { key: (input) => string }`);
  }
  if (definition.deadline !== undefined) toBoundedMs(definition.deadline, `workflow "${definition.name}": deadline`);
  validateCallbacks(definition as AnyWorkflow);
  validateSchedule(definition as AnyWorkflow);
  validateFlowControl(definition as AnyWorkflow);
  validateLifecycleHooks(definition as AnyWorkflow);
  validateSubscription(definition as AnyWorkflow);
  validateApprovals(definition as AnyWorkflow);
  return Object.freeze({ ...definition });
}

/** The name a lifecycle hook names (a workflow or its name), or null when it is neither. */
export function hookName(target: unknown): string | null {
  const name = typeof target === "string" ? target : (target as { name?: unknown } | null)?.name;
  return isStorableName(name) ? name : null;
}

/** Refuses an onComplete / onFailure that is neither a workflow nor a workflow's name (docs/guide/lifecycle.md). */
function validateLifecycleHooks(workflow: AnyWorkflow): void {
  for (const hook of ["onComplete", "onFailure"] as const) {
    if (workflow[hook] !== undefined && hookName(workflow[hook]) === null) {
      throw new InvalidInputError(
        `workflow "${workflow.name}": ${hook} is a workflow or a workflow's name (${NAME_RULE})`,
      );
    }
  }
}

/** `callbacks`: an object of zod schemas by callback id (docs/guide/composition.md, "Callback URLs"). */
function validateCallbacks(workflow: AnyWorkflow): void {
  const { callbacks } = workflow;
  if (callbacks === undefined) return;
  const what = `workflow "${workflow.name}": callbacks is an object of zod schemas by callback id`;
  if (callbacks === null || typeof callbacks !== "object" || Array.isArray(callbacks))
    throw new InvalidInputError(what);
  for (const [id, schema] of Object.entries(callbacks)) {
    if (!isStorableName(id))
      throw new InvalidInputError(`${what}; ${JSON.stringify(String(id).slice(0, 80))} is not a step id`);
    if (typeof (schema as z.ZodType | null)?.safeParse !== "function") {
      throw new InvalidInputError(`${what}; callbacks["${id}"] is not one`);
    }
  }
}

/** The workflows one instance registered. */
export interface WorkflowRegistry {
  /** By name, the newest version: what `start` starts. */
  newest: Map<string, AnyWorkflow>;
  /** Every registered version, by `versionKey(name, version)`: what a claimed run replays on. */
  byVersion: Map<string, AnyWorkflow>;
  /** For the claim: each name and the versions registered ("" for none), as SQL takes them. */
  versions: Record<string, string[]>;
  /** By name, what a new run's end starts (engine/lifecycle.ts); set by the instance, empty until then. */
  followups: Map<string, Followups>;
}

/** A workflow's version as stored on its runs: text, or null when it declares none. */
export function storedVersion(version: string | number | undefined | null): string | null {
  return version === undefined || version === null ? null : String(version);
}

/** The registry key of a name and a stored version. */
export const versionKey = (name: string, version: string | null): string => `${name}\u0000${version ?? ""}`;

/**
 * Registers workflows: several versions of one name are allowed, the same (name, version) twice is
 * a mistake refused early (1 and "1" are the same version: both are stored as "1"). The newest is
 * the largest by `compareVersions`.
 */
export function registerWorkflows(workflows: readonly AnyWorkflow[]): WorkflowRegistry {
  const registry: WorkflowRegistry = { newest: new Map(), byVersion: new Map(), versions: {}, followups: new Map() };
  for (const workflow of workflows) {
    const version = storedVersion(workflow.version);
    const key = versionKey(workflow.name, version);
    if (registry.byVersion.has(key)) {
      throw new InvalidInputError(
        version === null
          ? `two workflows are named "${workflow.name}" without a version; give each its own version`
          : `two workflows are named "${workflow.name}" with version "${version}"; versions of a name must differ`,
      );
    }
    registry.byVersion.set(key, workflow);
    registry.versions[workflow.name] = [...(registry.versions[workflow.name] ?? []), version ?? ""];
    const current = registry.newest.get(workflow.name);
    if (!current || compareVersions(current.version, workflow.version) < 0) {
      registry.newest.set(workflow.name, workflow);
    }
  }
  return registry;
}

/**
 * Orders two declared versions (docs/guide/versions.md, "Which version is newest"): none is the
 * oldest; numbers compare as numbers (1.25 < 1.3, -2 < -1, 2 < 1e21); strings in numeric-aware
 * order ("2" < "10", "v2" < "v10", "2024-06-01" < "2024-11-15"); and where one name mixes both, a
 * string is newer than any number (a switch from `version: 3` to `"2025-01"` moves forward).
 */
export function compareVersions(a: string | number | undefined, b: string | number | undefined): number {
  if (a === b) return 0;
  if (a === undefined || b === undefined) return a === undefined ? -1 : 1;
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === "number" || typeof b === "number") return typeof a === "number" ? -1 : 1;
  return a.localeCompare(b, "en", { numeric: true });
}
