import { sql } from "kysely";
import type { ClaimedRun } from "./claim";
import type { Workflow } from "./define-workflow";
import { InvalidInputError, serializeError } from "./errors";
import { Execution, type ExecutionSettings, type Stop } from "./execution";
import { toJsonText } from "./json";
import { failpoint } from "./failpoints";
import { finishRun, releaseRun } from "./ledger";
import { createStepApi, type WorkflowContext } from "./step-context";

/** What one invocation did with a claimed run. */
export type AdvanceOutcome =
  | "completed" // the body returned; output recorded
  | "failed" // the body threw (or made a mistake it cannot recover from)
  | "waiting" // parked until a wake time, a signal or a retry delay
  | "yielded" // the budget could not fit the next step: due again now
  | "lost" // another owner holds the run now: nothing more was written
  | "abandoned"; // past the deadline, or the database failed under a write: the lease will expire

type BodyEnd = { kind: "returned"; value: unknown } | { kind: "threw"; error: unknown };

/**
 * Runs one claimed run inside the invocation's budget: replays the body from the top (steps with
 * receipts answer from the ledger), executes the next steps, and ends with exactly one write for
 * the way it stopped: complete, fail, park or give back. A suspended body is abandoned, not
 * awaited (rule 11b): its pending step promises never settle.
 */
export async function advanceClaimedRun(
  settings: ExecutionSettings,
  workflow: Workflow<any, any, any>,
  claim: ClaimedRun,
  deadline: number,
): Promise<AdvanceOutcome> {
  const exec = new Execution(settings, claim, deadline);
  const log = (...args: unknown[]) => settings.log(`[${claim.run.id}] ${args.map(String).join(" ")}`);
  const ctx: WorkflowContext = {
    runId: claim.run.id,
    input: claim.run.input,
    step: createStepApi(exec),
    abortSignal: exec.abort.signal,
    log,
  };
  const body: Promise<BodyEnd> = Promise.resolve()
    .then(() => workflow.run(ctx, claim.run.input))
    .then((value) => ({ kind: "returned" as const, value }), (error) => ({ kind: "threw" as const, error }));

  let settled = false;
  void body.then(() => (settled = true));
  const first = await Promise.race([body, exec.stopped.then((stop) => ({ kind: "stopped" as const, stop }))]);
  if (first.kind === "stopped" || exec.isStopping) {
    const stop = first.kind === "stopped" ? first.stop : await exec.stopped;
    // One turn of the event loop shows whether the body settled although a step suspended it
    // (it raced or swallowed a step): the run stays suspended all the same (rule 11b).
    await new Promise((resolve) => setImmediate(resolve));
    if (settled && (stop.kind === "suspend" || stop.kind === "yield")) {
      log("the workflow body settled while suspended (did it race or swallow a step?); the run stays suspended");
    }
    return applyStop(exec, stop);
  }
  return first.kind === "returned" ? complete(exec, workflow, first.value) : fail(exec, first.error);
}

async function complete(exec: Execution, workflow: Workflow<any, any, any>, value: unknown): Promise<AdvanceOutcome> {
  let outputJson: string;
  try {
    const parsed = workflow.output ? workflow.output.safeParse(value) : { success: true as const, data: value };
    if (!parsed.success) {
      throw new InvalidInputError(`the output of workflow "${workflow.name}" does not match its schema`, { issues: parsed.error.issues });
    }
    outputJson = toJsonText(parsed.data, { limit: exec.settings.maxResultBytes });
  } catch (error) {
    return fail(exec, error);
  }
  const warnings = exec.unreachedSteps().map((id) => `step "${id}" has a receipt but was not reached by the execution that completed the run`);
  return write(exec, "completed", () => finishRun(exec.db, exec.runId, exec.fence, { status: "completed", outputJson }, warnings));
}

function fail(exec: Execution, error: unknown): Promise<AdvanceOutcome> {
  return write(exec, "failed", () => finishRun(exec.db, exec.runId, exec.fence, { status: "failed", error: serializeError(error) }));
}

async function applyStop(exec: Execution, stop: Stop): Promise<AdvanceOutcome> {
  switch (stop.kind) {
    case "lost":
      return "lost";
    case "abandon":
      exec.settings.log(`[${exec.runId}] abandoned: ${stop.reason}`);
      return "abandoned";
    case "fail":
      return fail(exec, stop.error);
    case "yield":
      return write(exec, "yielded", () => releaseRun(exec.db, exec.runId, exec.fence, stop.stepId));
    case "suspend":
      return write(exec, "waiting", async () => {
        const { rows } = await sql<{ ok: boolean }>`
          select durable_suspend_run(${exec.runId}, ${exec.fence}::bigint, ${JSON.stringify(stop.waits)}::jsonb,
                                     ${JSON.stringify(stop.waitingFor)}::jsonb) as ok`.execute(exec.db);
        return rows[0]!.ok;
      });
  }
}

/** The final write of an invocation: never after the deadline; a failed write leaves the lease to expire. */
async function write(exec: Execution, outcome: AdvanceOutcome, statement: () => Promise<boolean>): Promise<AdvanceOutcome> {
  if (exec.remainingMs() <= 0) return "abandoned";
  try {
    await failpoint("finish.before");
    const written = await statement();
    await failpoint("finish.after");
    return written ? outcome : "lost";
  } catch (error) {
    exec.settings.log(`[${exec.runId}] the final write failed, the run will be healed when its lease expires: ${String(error)}`);
    return "abandoned";
  }
}
