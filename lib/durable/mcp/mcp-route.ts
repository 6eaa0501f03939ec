import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import * as streamableHttp from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListToolsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Durable } from "../engine/create-durable";
import { UnauthorizedError } from "../errors";
import { allowOnly, createRouteContext, type RouteContext } from "../http/routes/route-context";
import type { Handler } from "../http/routes/types";
import type { AnyWorkflow } from "../types";
import { JsonRpcError, mcpErrorOf } from "./mcp-errors";
import { callOperatorTool, isOperatorTool, OPERATOR_TOOL_NAMES, operatorTools } from "./operator-tools";
import { cancelTask, getTask, type TaskScope, taskResult } from "./task-methods";
import type { McpAccess, McpRoute, McpRouteOptions } from "./types";
import { callWorkflowTool, workflowTool } from "./workflow-tools";

// createMcpRoute (docs/guide/mcp.md): a Model Context Protocol server over the SDK's Web-standard
// Streamable HTTP transport, stateless: each POST builds a server and a transport, answers in JSON,
// and keeps nothing; a task is a run, read from the database at each request.

/** The SDK's wire version is the package's; ours names the server. */
const SERVER_VERSION = "1";

interface Mounted {
  ctx: RouteContext;
  options: McpRouteOptions;
  byName: ReadonlyMap<string, AnyWorkflow>;
  tools: readonly Tool[];
}

/**
 * The MCP route over the app's durable instance. `authorize` is required: without it this throws,
 * so an app cannot mount a server anyone may start runs on.
 *
 * @example
 * // app/api/durable/mcp/route.ts
 * export const maxDuration = 60;
 * export const { GET, POST, PUT, PATCH, DELETE } = createMcpRoute(getDurable, {
 *   workflows: [hello],
 *   authorize: (request) => request.headers.get("authorization") === `Bearer ${process.env.DURABLE_SECRET}`,
 * }).handlers;
 */
export function createMcpRoute(getDurable: () => Promise<Durable>, options: McpRouteOptions): McpRoute {
  if (typeof options?.authorize !== "function") {
    throw new TypeError("createMcpRoute: `authorize(request)` is required; it decides who may call the server");
  }
  if (!Array.isArray(options.workflows)) {
    throw new TypeError("createMcpRoute: `workflows` (the workflows offered as tools) is required, an array");
  }
  const byName = new Map<string, AnyWorkflow>();
  const tools = options.workflows.map((workflow) => {
    const tool = workflowTool(workflow);
    if (byName.has(workflow.name) || OPERATOR_TOOL_NAMES.includes(workflow.name as never)) {
      throw new TypeError(`createMcpRoute: two tools are named "${workflow.name}"`);
    }
    byName.set(workflow.name, workflow);
    return tool;
  });
  const ctx = createRouteContext(getDurable, options);
  const mounted: Mounted = { ctx, options, byName, tools };
  return {
    handlers: allowOnly<Handler>({ POST: ctx.guard((request) => answer(mounted, request)) }),
    idle: () => ctx.idle(),
  };
}

/** One POST: authorized first (a refusal is a 401 and reads nothing), then one MCP exchange. */
async function answer(mounted: Mounted, request: Request): Promise<Response> {
  const startedAt = Date.now();
  const access = await mounted.options.authorize(request);
  if (access !== true && access !== "workflows") throw new UnauthorizedError("missing or wrong credentials");
  const server = serverFor(mounted, access, startedAt);
  const transport = new streamableHttp.WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: mounted.ctx.maxBody,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request);
  } finally {
    await server.close();
  }
}

function serverFor(mounted: Mounted, access: McpAccess, startedAt: number): Server {
  const { ctx, byName, tools } = mounted;
  const server = new Server(
    { name: mounted.options.name ?? "durable-next", version: SERVER_VERSION },
    { capabilities: { tools: {}, tasks: { cancel: {}, requests: { tools: { call: {} } } } } },
  );
  const operator = access === true;
  const guarded =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await fn(...args);
      } catch (e) {
        throw mcpErrorOf(e, ctx.log);
      }
    };
  const scope = async (): Promise<TaskScope> => ({
    ctx,
    durable: await ctx.durable(),
    mayRead: (run) => operator || byName.has(run.workflow),
    startedAt,
  });
  server.setRequestHandler(
    ListToolsRequestSchema,
    guarded(async () => ({ tools: operator ? [...tools, ...operatorTools()] : [...tools] })),
  );
  server.setRequestHandler(
    CallToolRequestSchema,
    guarded(async (request) => {
      const { name, arguments: args, task } = request.params;
      const workflow = byName.get(name);
      if (workflow) return callWorkflowTool(ctx, await ctx.durable(), workflow, args, task !== undefined, startedAt);
      if (operator && isOperatorTool(name)) {
        if (task !== undefined)
          throw new JsonRpcError(ErrorCode.InvalidParams, `tool ${name} answers at once, not as a task`);
        return callOperatorTool(ctx, await ctx.durable(), name, args, startedAt);
      }
      throw new JsonRpcError(ErrorCode.InvalidParams, `Tool ${name} not found`, { code: "tool_not_found" });
    }),
  );
  server.setRequestHandler(
    GetTaskRequestSchema,
    guarded(async (request) => getTask(await scope(), request.params.taskId)),
  );
  server.setRequestHandler(
    GetTaskPayloadRequestSchema,
    guarded(async (request, extra) => taskResult(await scope(), request.params.taskId, extra.signal)),
  );
  server.setRequestHandler(
    CancelTaskRequestSchema,
    guarded(async (request) => cancelTask(await scope(), request.params.taskId)),
  );
  return server;
}
