import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { DurableError, InvalidInputError, RunNotFoundError } from "../errors";

// What the MCP route answers for an error (docs/guide/mcp.md, "Errors"): a JSON-RPC error whose
// `data.code` is the error's code of the taxonomy (docs/decisions.md, "Errors"). Input the toolkit
// refuses is InvalidParams, with zod's issues; a run in the wrong state is InvalidRequest; anything
// unknown is logged and answered `internal`, never leaked.

/** An McpError for what a handler threw. */
export function mcpErrorOf(e: unknown, log: (message: string) => void): McpError {
  if (e instanceof McpError) return e;
  if (InvalidInputError.is(e)) {
    return new McpError(ErrorCode.InvalidParams, e.message, {
      code: e.code,
      ...(e.issues === undefined ? {} : { issues: e.issues }),
    });
  }
  if (RunNotFoundError.is(e)) return new McpError(ErrorCode.InvalidParams, e.message, { code: e.code });
  if (DurableError.is(e)) return new McpError(ErrorCode.InvalidRequest, e.message, { code: e.code });
  log(`an MCP request failed: ${(e as Error)?.stack ?? e}`);
  return new McpError(ErrorCode.InternalError, "internal error", { code: "internal" });
}

/** A task the caller may not see is answered as one that does not exist. */
export const taskNotFound = (taskId: unknown) =>
  new McpError(ErrorCode.InvalidParams, `Task not found: ${JSON.stringify(taskId)}`, { code: "run_not_found" });

/** The arguments of a tool that its schema refuses. */
export const invalidArguments = (tool: string, issues: unknown) =>
  new McpError(ErrorCode.InvalidParams, `invalid arguments for tool ${tool}`, { code: "invalid_input", issues });
