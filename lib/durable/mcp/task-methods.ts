import {
  type CallToolResult,
  ErrorCode,
  type GetTaskResult,
  RELATED_TASK_META_KEY,
} from "@modelcontextprotocol/sdk/types.js";
import type { Durable } from "../engine/create-durable";
import type { RouteContext } from "../http/routes/route-context";
import { isStorableName } from "../names";
import type { RunStatus } from "../schemas";
import { JsonRpcError, taskNotFound } from "./mcp-errors";
import { endedRunResult, hasEnded, POLL_INTERVAL_MS, taskOf, taskStatusOf } from "./run-task";

// tasks/get, tasks/result and tasks/cancel over runs (docs/guide/mcp.md, "Tasks"): the task id is
// the run id. Nothing is kept between requests: each reads the run, and the read heals a run whose
// owner died (its lease ran out), as `durable.status` does; a run due then is advanced after the answer.

export interface TaskScope {
  ctx: RouteContext;
  durable: Durable;
  /** Whether the caller may see run `run` as a task: a listed workflow's, or any for an operator. */
  mayRead(run: RunStatus): boolean;
  startedAt: number;
}

/** The run behind task `taskId`, healed; a run the caller may not see is not found, as an unknown one. */
async function readTask(scope: TaskScope, taskId: unknown) {
  if (!isStorableName(taskId)) throw taskNotFound(taskId);
  const read = await scope.durable.inspect(taskId);
  if (!read || !scope.mayRead(read.status)) throw taskNotFound(taskId);
  return read;
}

/** tasks/get: the run as a task, read (and healed) now; a due run is advanced after the answer. */
export async function getTask(scope: TaskScope, taskId: unknown): Promise<GetTaskResult> {
  const read = await readTask(scope, taskId);
  if (read.due) scope.ctx.advanceAfterResponse(scope.durable, read.status.id, scope.startedAt);
  return taskOf(read);
}

/** tasks/cancel: cancels the run (and its children); a run that ended is refused, as MCP says. */
export async function cancelTask(scope: TaskScope, taskId: unknown): Promise<GetTaskResult> {
  const read = await readTask(scope, taskId);
  if (hasEnded(read.status)) {
    throw new JsonRpcError(ErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${read.status.status}`, {
      code: "run_state_conflict",
    });
  }
  const cancelled = await scope.durable.cancel(read.status.id, { reason: "cancelled by MCP tasks/cancel" });
  return taskOf({ status: cancelled, due: false });
}

/**
 * tasks/result: the tool's answer once the run ended. A run not ended yet is advanced inside the
 * request (MCP has the call wait for the end), until it ends, needs input, or the invocation's budget
 * is spent; then the caller is told to poll tasks/get and ask again: a serverless function cannot wait
 * on a run for longer than it lives.
 */
export async function taskResult(scope: TaskScope, taskId: unknown, signal: AbortSignal): Promise<CallToolResult> {
  const { ctx, durable, startedAt } = scope;
  let read = await readTask(scope, taskId);
  const id = read.status.id;
  while (!hasEnded(read.status) && taskStatusOf(read.status, read.due) !== "input_required" && !signal.aborted) {
    const left = ctx.budgetMs(startedAt);
    if (left <= POLL_INTERVAL_MS) break;
    if (read.due) await durable.advance(id, { budgetMs: left, children: true });
    else await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_INTERVAL_MS, left - POLL_INTERVAL_MS)));
    read = await readTask(scope, id);
  }
  if (!hasEnded(read.status)) {
    const task = taskOf(read);
    throw new JsonRpcError(
      ErrorCode.InvalidRequest,
      `task ${id} is ${task.status}${task.statusMessage ? ` (${task.statusMessage})` : ""}: poll tasks/get, ` +
        "then ask for its result again",
      { code: "run_not_ended", task },
    );
  }
  const result = endedRunResult(read.status);
  return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId: id } } };
}
