import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import type { Durable } from "../engine/create-durable";
import { RunNotFoundError } from "../errors";
import type { RouteContext } from "../http/routes/route-context";
import { isStorableName, NAME_RULE } from "../names";
import { runStatusValues } from "../schemas";
import { invalidArguments } from "./mcp-errors";

// The operator tools (docs/guide/mcp.md, "Operator tools"): list, read, cancel, retry and fork any
// run, each one call on the durable instance, offered only to a request `authorize` answered `true`.

const runId = z.string().refine(isStorableName, `a run id is ${NAME_RULE}`).describe("the run's id");

const schemas = {
  runs_list: z
    .object({
      status: z.array(runStatusValues).min(1).optional().describe("only runs in these statuses"),
      workflow: z.string().refine(isStorableName, NAME_RULE).optional(),
      tag: z.string().min(1).max(64).optional(),
      limit: z.number().int().min(1).max(200).optional(),
      cursor: z.string().min(1).max(1000).optional().describe("the nextCursor of the page before"),
    })
    .strict()
    .describe("Lists runs, newest first, a page at a time (filters: status, workflow, tag)."),
  runs_get: z.object({ id: runId }).strict().describe("Reads a run: its status, output or error, and steps."),
  runs_cancel: z
    .object({ id: runId, reason: z.string().max(1000).optional() })
    .strict()
    .describe("Cancels a run that has not ended, and its children."),
  runs_retry: z.object({ id: runId }).strict().describe("Retries a failed run, keeping its completed steps."),
  runs_fork: z
    .object({ id: runId, fromStep: z.string().refine(isStorableName, NAME_RULE).describe("the step to run again") })
    .strict()
    .describe("Starts a new run of the run's workflow and input that replays its steps before fromStep."),
};

export type OperatorToolName = keyof typeof schemas;
export const OPERATOR_TOOL_NAMES = Object.keys(schemas) as OperatorToolName[];
export const isOperatorTool = (name: string): name is OperatorToolName => Object.hasOwn(schemas, name);

/** The operator tools as MCP lists them. */
export function operatorTools(): Tool[] {
  return OPERATOR_TOOL_NAMES.map((name) => {
    const {
      $schema: _dialect,
      description,
      ...inputSchema
    } = z.toJSONSchema(schemas[name], { io: "input" }) as Record<string, unknown>;
    return { name, description: description as string, inputSchema: inputSchema as Tool["inputSchema"] };
  });
}

const answer = (value: object): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  structuredContent: value as Record<string, unknown>,
});

/** The tool's arguments, checked by its schema first: a refused argument changes nothing. */
function argumentsOf<N extends OperatorToolName>(name: N, args: unknown): z.output<(typeof schemas)[N]> {
  const parsed = schemas[name].safeParse(args ?? {});
  if (!parsed.success) throw invalidArguments(name, parsed.error.issues);
  return parsed.data as z.output<(typeof schemas)[N]>;
}

/** Runs operator tool `name` with `args`: one call on the durable instance. */
export async function callOperatorTool(
  ctx: RouteContext,
  durable: Durable,
  name: OperatorToolName,
  args: unknown,
  startedAt: number,
): Promise<CallToolResult> {
  switch (name) {
    case "runs_list":
      return answer(await durable.list(argumentsOf(name, args)));
    case "runs_get": {
      const { id } = argumentsOf(name, args);
      const run = await durable.status(id);
      if (!run) throw new RunNotFoundError(id);
      return answer(run);
    }
    case "runs_cancel": {
      const { id, reason } = argumentsOf(name, args);
      return answer(await durable.cancel(id, reason === undefined ? {} : { reason }));
    }
    case "runs_retry": {
      const { id } = argumentsOf(name, args);
      const run = await durable.retry(id);
      ctx.advanceAfterResponse(durable, id, startedAt);
      return answer(run);
    }
    case "runs_fork": {
      const { id, fromStep } = argumentsOf(name, args);
      const fork = await durable.fork(id, { fromStep });
      ctx.advanceAfterResponse(durable, fork.id, startedAt);
      return answer(fork);
    }
  }
}
