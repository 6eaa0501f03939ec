import { type CallToolResult, RELATED_TASK_META_KEY, type Task } from "@modelcontextprotocol/sdk/types.js";
import type { RunStatus } from "../schemas";

// A run as an MCP task (docs/guide/mcp.md, "Tasks"): the task id is the run id, its status the
// run's, and its result the tool's answer once the run ended.

/** How often a client is asked to poll `tasks/get`, in milliseconds. */
export const POLL_INTERVAL_MS = 1000;

/**
 * The MCP task status of a run: a run waiting on a signal needs input from outside, until one is
 * delivered (`due`: a claim would take the run now).
 */
export function taskStatusOf(run: RunStatus, due: boolean): Task["status"] {
  switch (run.status) {
    case "completed":
    case "failed":
    case "cancelled":
      return run.status;
    case "waiting":
      return run.waitingFor?.kind === "signal" && !due ? "input_required" : "working";
    default:
      return "working";
  }
}

function statusMessageOf(run: RunStatus): string | undefined {
  if (run.error) return `${run.error.code}: ${run.error.message}`;
  if (run.status === "waiting" && run.waitingFor) {
    const { kind, name } = run.waitingFor;
    return kind === "signal"
      ? `waiting for signal "${name}" (deliver it to run ${run.id}: POST /api/durable/signal)`
      : `waiting (${kind} "${name}")`;
  }
  return undefined;
}

/**
 * The run (as `durable.inspect` reads it) as a task; runs are kept as the app's retention says, so
 * the task has no ttl of its own.
 */
export function taskOf({ status: run, due }: { status: RunStatus; due: boolean }): Task {
  const statusMessage = statusMessageOf(run);
  return {
    taskId: run.id,
    status: taskStatusOf(run, due),
    ttl: null,
    createdAt: run.createdAt,
    lastUpdatedAt: run.updatedAt,
    pollInterval: POLL_INTERVAL_MS,
    ...(statusMessage === undefined ? {} : { statusMessage }),
  };
}

/** Whether the run has ended: its task's result is final. */
export const hasEnded = (run: RunStatus) =>
  run.status === "completed" || run.status === "failed" || run.status === "cancelled";

/**
 * The tool's answer for an ended run: its output (as text, and as structured content when it is an
 * object), or its error marked `isError`, as MCP reports a tool's failure.
 */
export function endedRunResult(run: RunStatus): CallToolResult {
  if (run.status === "completed") {
    const output = run.output ?? null;
    const structured = typeof output === "object" && output !== null && !Array.isArray(output);
    return {
      content: [{ type: "text", text: JSON.stringify(output) }],
      ...(structured ? { structuredContent: output as Record<string, unknown> } : {}),
    };
  }
  const error = run.error ?? { code: run.status, message: `the run was ${run.status}` };
  return {
    isError: true,
    content: [{ type: "text", text: `run ${run.id} ${run.status}: ${error.code}: ${error.message}` }],
  };
}

/** The answer to a call without a task whose run did not end within the request: where to follow it. */
export function runningRunResult(run: RunStatus): CallToolResult {
  const message = statusMessageOf(run);
  const text = `run ${run.id} is ${run.status}${message ? ` (${message})` : ""}: follow it with tasks/get`;
  return {
    content: [{ type: "text", text }],
    structuredContent: { runId: run.id, status: run.status },
    _meta: { [RELATED_TASK_META_KEY]: { taskId: run.id } },
  };
}
