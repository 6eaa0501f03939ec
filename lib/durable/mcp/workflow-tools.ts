import type { CallToolResult, CreateTaskResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import type { Durable } from "../engine/create-durable";
import { RunNotFoundError, WorkflowNotFoundError } from "../errors";
import type { RouteContext } from "../http/routes/route-context";
import type { AnyWorkflow } from "../types";
import { endedRunResult, hasEnded, runningRunResult, taskOf } from "./run-task";

// Each listed workflow is a tool (docs/guide/mcp.md, "Workflows as tools"): its input schema is the
// workflow's zod schema as JSON Schema, and a call starts a run.

/** What MCP allows in a tool's name (letters, digits, `_`, `-`, `.`; 1–128 characters). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Checks a tool name at mount: a name MCP refuses would make every client fail on the list. */
export function checkToolName(name: string, what: string): void {
  if (!TOOL_NAME.test(name)) {
    throw new TypeError(
      `createMcpRoute: ${what} "${name}" is not an MCP tool name (letters, digits, _, - and . only; at most 128)`,
    );
  }
}

/**
 * The workflow as a tool. MCP's input schema is a JSON object, so the workflow's input must be a
 * zod object; what JSON Schema cannot state (a refine, a transform) is still checked by `start`.
 */
export function workflowTool(workflow: AnyWorkflow): Tool {
  checkToolName(workflow.name, "workflow");
  const schema = z.toJSONSchema(workflow.input, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  if (schema.type !== "object") {
    throw new TypeError(
      `createMcpRoute: workflow "${workflow.name}" takes ${String(schema.type ?? "a non-object")} input; ` +
        "an MCP tool takes an object: give the workflow a z.object input",
    );
  }
  const { $schema: _dialect, ...inputSchema } = schema;
  const description = workflow.input.description;
  return {
    name: workflow.name,
    description:
      description ??
      `Starts a run of workflow "${workflow.name}". ` +
        "Called as a task, the task id is the run id: follow it with tasks/get.",
    inputSchema: inputSchema as Tool["inputSchema"],
    execution: { taskSupport: "optional" },
  };
}

/**
 * A call of the workflow's tool: starts the run (its input checked as `start` checks it). Asked for a
 * task, it answers the task at once and advances the run after the answer; else it advances the run
 * inside the request and answers its output, or, when it did not end, where to follow it.
 */
export async function callWorkflowTool(
  ctx: RouteContext,
  durable: Durable,
  workflow: AnyWorkflow,
  args: unknown,
  asTask: boolean,
  startedAt: number,
): Promise<CallToolResult | CreateTaskResult> {
  if (durable.workflows.get(workflow.name) === undefined) throw new WorkflowNotFoundError(workflow.name);
  const started = await durable.start(workflow, (args ?? {}) as never);
  if (asTask) {
    const read = await inspected(durable, started.id);
    if (read.due) ctx.advanceAfterResponse(durable, started.id, startedAt);
    return { task: taskOf(read) };
  }
  await durable.advance(started.id, { budgetMs: ctx.budgetMs(startedAt), children: true });
  const read = await inspected(durable, started.id);
  if (hasEnded(read.status)) return endedRunResult(read.status);
  if (read.due) ctx.advanceAfterResponse(durable, started.id, startedAt);
  return runningRunResult(read.status);
}

/** The run's status (healed, as `inspect` heals) and whether it is due; a run deleted meanwhile is not found. */
export async function inspected(durable: Durable, id: string) {
  const read = await durable.inspect(id);
  if (!read) throw new RunNotFoundError(id);
  return read;
}
