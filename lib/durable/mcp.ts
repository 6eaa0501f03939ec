// Entry point of the MCP wing (the package's `durable-next/mcp`): `createMcpRoute`, a Model Context
// Protocol server where each listed workflow is a tool and a call is a run (docs/guide/mcp.md). It
// imports `@modelcontextprotocol/sdk`, an optional peer: only an app that imports this entry loads
// it; no other entry imports mcp/ (docs/layout.md, "The mcp/ wing").
export { createMcpRoute } from "./mcp/mcp-route";
export type { McpAccess, McpAuthorize, McpRoute, McpRouteOptions } from "./mcp/types";
