import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { DurableError, InvalidInputError, RunNotFoundError } from "../errors";

// What the MCP route answers for an error (docs/guide/mcp.md, "Errors"): a JSON-RPC error whose
// `data.code` is the error's code of the taxonomy (docs/decisions.md, "Errors"). Input the toolkit
// refuses is InvalidParams, with zod's issues; a run in the wrong state is InvalidRequest; anything
// unknown is logged and answered `internal`, never leaked.

/**
 * A JSON-RPC error as the SDK's server sends it (its `code`, `message` and `data`). Not an McpError:
 * that one's message starts "MCP error <code>: ", which the client adds again to what it receives.
 */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "JsonRpcError";
  }
}

/** The JSON-RPC error for what a handler threw. */
export function mcpErrorOf(e: unknown, log: (message: string) => void): Error {
  if (e instanceof McpError || e instanceof JsonRpcError) return e;
  if (InvalidInputError.is(e)) {
    return new JsonRpcError(ErrorCode.InvalidParams, e.message, {
      code: e.code,
      ...(e.issues === undefined ? {} : { issues: e.issues }),
    });
  }
  if (RunNotFoundError.is(e)) return new JsonRpcError(ErrorCode.InvalidParams, e.message, { code: e.code });
  if (DurableError.is(e)) return new JsonRpcError(ErrorCode.InvalidRequest, e.message, { code: e.code });
  log(`an MCP request failed: ${(e as Error)?.stack ?? e}`);
  return new JsonRpcError(ErrorCode.InternalError, "internal error", { code: "internal" });
}

/** A task the caller may not see is answered as one that does not exist. */
export const taskNotFound = (taskId: unknown) =>
  new JsonRpcError(ErrorCode.InvalidParams, `Task not found: ${JSON.stringify(taskId)}`, { code: "run_not_found" });

/** The arguments of a tool that its schema refuses. */
export const invalidArguments = (tool: string, issues: unknown) =>
  new JsonRpcError(ErrorCode.InvalidParams, `invalid arguments for tool ${tool}`, { code: "invalid_input", issues });
