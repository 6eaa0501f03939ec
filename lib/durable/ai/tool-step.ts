import { InvalidInputError } from "../errors";
import type { AgentToolStep } from "../types";

/**
 * The step an agent's tool call runs as, from the options its `execute` is given: its external key
 * (pass it as the idempotency key of the call's effect), attempt and whether it is a reclaim.
 * @throws InvalidInputError when `execute` was not called by `ctx.step.ai.agent`
 */
export function toolStep(options: { experimental_context?: unknown }): AgentToolStep {
  const step = options.experimental_context as Partial<AgentToolStep> | undefined;
  if (typeof step?.externalKey !== "string" || typeof step.stepId !== "string") {
    throw new InvalidInputError("toolStep(options): this tool call was not made by ctx.step.ai.agent");
  }
  return step as AgentToolStep;
}
