import type { z } from "zod";
import { InvalidInputError } from "./errors";
import type { WorkflowContext } from "./step-context";

/** Zod schemas of the signals a workflow waits for, by signal name. */
export type SignalSchemas = Record<string, z.ZodType>;

export interface WorkflowDefinition<
  TInput extends z.ZodType,
  TOutput,
  TSignals extends SignalSchemas,
> {
  /** Unique among the workflows of one `createDurable`; stored on every run. */
  name: string;
  /** Validates the input at `start` (HTTP 422); the body gets the parsed value. */
  input: TInput;
  /** Validates what the body returns; a mismatch fails the run. */
  output?: z.ZodType<TOutput>;
  /** Signal payload schemas, validated when a signal arrives; other names are refused. */
  signals?: TSignals;
  run(ctx: WorkflowContext<z.output<TInput>, TSignals>, input: z.output<TInput>): Promise<TOutput>;
}

export interface Workflow<
  TInput extends z.ZodType = z.ZodType,
  TOutput = unknown,
  TSignals extends SignalSchemas = SignalSchemas,
> extends Readonly<WorkflowDefinition<TInput, TOutput, TSignals>> {}

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
export function defineWorkflow<
  TInput extends z.ZodType,
  TOutput,
  TSignals extends SignalSchemas = {},
>(definition: WorkflowDefinition<TInput, TOutput, TSignals>): Workflow<TInput, TOutput, TSignals> {
  if (typeof definition.name !== "string" || !/^\S[\s\S]{0,254}$/.test(definition.name)) {
    throw new InvalidInputError("a workflow name is a non-empty string of at most 255 characters");
  }
  if (typeof definition.run !== "function") {
    throw new InvalidInputError(`workflow "${definition.name}" needs a run(ctx, input) function`);
  }
  return Object.freeze({ ...definition });
}

/** The workflows one instance registered, by name; duplicate names are a mistake, refused early. */
export function registerWorkflows(workflows: readonly Workflow<any, any, any>[]): Map<string, Workflow<any, any, any>> {
  const byName = new Map<string, Workflow<any, any, any>>();
  for (const workflow of workflows) {
    if (byName.has(workflow.name)) {
      throw new InvalidInputError(`two workflows are named "${workflow.name}"; names must be unique`);
    }
    byName.set(workflow.name, workflow);
  }
  return byName;
}
