import type { DurableRoutesOptions, Handler, Methods } from "../http/routes/types";
import type { AnyWorkflow } from "../types";

// The options and the shape of `createMcpRoute` (docs/guide/mcp.md).

/**
 * What a request to the MCP route may do: `false` refuses it (401, nothing read); `"workflows"`
 * lets it call the listed workflows and read and cancel their tasks; `true` adds the operator
 * tools (list, read, cancel, retry and fork any run).
 */
export type McpAccess = boolean | "workflows";

/** Decides, per request, what the caller may do: the app's bearer or session check. */
export type McpAuthorize = (request: Request) => McpAccess | Promise<McpAccess>;

export interface McpRouteOptions
  extends Pick<
    DurableRoutesOptions,
    "maxDuration" | "budgetMarginMs" | "waitUntil" | "getDeadline" | "log" | "maxBodyBytes"
  > {
  /** The workflows offered as tools, each registered on the instance; a tool's name is its workflow's. */
  workflows: readonly AnyWorkflow[];
  /** Required: what the request may do (McpAccess). Without it the route refuses to mount. */
  authorize: McpAuthorize;
  /** The server's name in MCP's `initialize` answer (default "durable-next"). */
  name?: string;
}

export interface McpRoute {
  /** The route's handlers (app/api/durable/mcp/route.ts): POST answers MCP, the others 405. */
  handlers: Methods<Handler>;
  /** Resolves once every advance started after an answer has settled (tests, scripts). */
  idle(): Promise<void>;
}
