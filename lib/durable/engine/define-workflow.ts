import type { z } from "zod";
import { InvalidInputError } from "../errors";
import { isStorableName, NAME_RULE } from "../names";
import type { AnyWorkflow, NoSignals, SignalSchemas, Workflow, WorkflowDefinition } from "../types";
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
  validateSchedule(definition as AnyWorkflow);
  return Object.freeze({ ...definition });
}

/** The workflows one instance registered, by name; duplicate names are a mistake, refused early. */
export function registerWorkflows(workflows: readonly AnyWorkflow[]): Map<string, AnyWorkflow> {
  const byName = new Map<string, AnyWorkflow>();
  for (const workflow of workflows) {
    if (byName.has(workflow.name)) {
      throw new InvalidInputError(`two workflows are named "${workflow.name}"; names must be unique`);
    }
    byName.set(workflow.name, workflow);
  }
  return byName;
}
