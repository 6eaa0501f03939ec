import { createHash } from "node:crypto";
import { toBoundedMs } from "../duration";
import type { StepHost } from "../engine/run/step-host";
import { ChildRunFailedError, RunStateConflictError, StepTimeoutError } from "../errors";
import { MAX_NAME_LENGTH } from "../names";
import type { ChildNotStarted, StepRecord } from "../store";
import type { AnyWorkflow, ChildRun, InvokeOptions, RunOutcome, StoredError } from "../types";
import { never } from "./never";
import { traceWait } from "./wait-until";

/**
 * Child runs (docs/guide/composition.md, "Child runs"). `invoke` parks the parent with the child's
 * insert in the suspension's one statement, so a `Promise.all` of many invokes starts every child
 * and records every wait at once; the child's end makes the parent due in its own transaction
 * (durable_wake_waiters) and the claim that wakes the parent answers the invoke
 * (durable_resolve_waits). `start` inserts the child with its receipt, in one statement under the
 * parent's fence (durable_record_step), so a parent cancelled or taken over starts nothing
 * (docs/sql.md, "Child runs").
 */
export function createChildSteps(host: StepHost) {
  return {
    invoke: (id: string, workflow: AnyWorkflow, input: unknown, options: InvokeOptions = {}): Promise<any> =>
      invoke(host, id, workflow, input, options),
    start: (id: string, workflow: AnyWorkflow, input: unknown, options: { id?: string } = {}): Promise<ChildRun> =>
      startChild(host, id, workflow, input, options),
  };
}

/** A child's default id: `<run id>/<step id>`, or a digest of it when that is too long for a run id. */
export function childIdFor(runId: string, stepId: string): string {
  const id = `${runId}/${stepId}`;
  if (id.length <= MAX_NAME_LENGTH) return id;
  return `child~${createHash("sha256").update(id).digest("base64url")}`;
}

export function composeOf(host: StepHost): NonNullable<StepHost["compose"]> {
  const compose = host.compose;
  if (!compose) throw new Error("this execution was made without composition support");
  return compose;
}

async function invoke(
  host: StepHost,
  id: string,
  workflow: AnyWorkflow,
  input: unknown,
  options: InvokeOptions,
): Promise<unknown> {
  const timeoutMs = options.timeout === undefined ? null : toBoundedMs(options.timeout, `invoke "${id}" timeout`);
  const { seq, recorded, isReclaim } = host.reach(id, "invoke");
  if (recorded?.status === "completed") return ((await host.answer(recorded)) as RunOutcome).output;
  if (recorded?.status === "failed") return failedInvoke(host, recorded);
  if (!host.acceptsWaits) return never();
  return traceWait(host, id, "invoke", isReclaim, async () => {
    if (recorded) {
      const childId = recorded.targetRuns?.[0] ?? id;
      return host.stop({ kind: "suspend", waits: [{ step_id: id }], waitingFor: { kind: "run", name: childId } });
    }
    const child = composeOf(host).prepare(workflow, input, options.id ?? childIdFor(host.runId, id));
    const start = {
      id: child.id,
      workflow: child.workflow,
      input: JSON.parse(child.inputJson) as unknown,
      version: child.version ?? null,
      concurrency_key: child.concurrencyKey ?? null,
      singleton_key: child.singletonKey ?? null,
      deadline_in_ms: child.deadlineInMs,
      followups: child.followups ?? null,
    };
    return host.stop({
      kind: "suspend",
      waits: [
        {
          step_id: id,
          seq,
          kind: "invoke",
          deadline_in_ms: timeoutMs,
          branches: [{ name: "run", run: child.id }],
          target_runs: [child.id],
          start,
        },
      ],
      waitingFor: { kind: "run", name: child.id },
    });
  });
}

/**
 * An invoke answered with a failure, the same on every replay: the child's failure as
 * `ChildRunFailedError`, a timeout as `StepTimeoutError` (and the child cancelled, which a
 * replay asks again: a no-op once it ended), anything else (the child could not start) as stored.
 */
async function failedInvoke(host: StepHost, recorded: StepRecord): Promise<never> {
  const error = recorded.error as
    | (StoredError & { childId?: string; childStatus?: string; childError?: StoredError })
    | null;
  if (error?.code === "step_timeout" && error.childId && !host.stopping) {
    const childId = error.childId;
    await host.cancelChild(childId, `step "${recorded.stepId}" of run "${host.runId}" timed out`);
  }
  if (error?.code === "child_run_failed" && error.childId) {
    throw host.noteRecordedFailure(
      new ChildRunFailedError({
        childId: error.childId,
        childStatus: error.childStatus === "cancelled" ? "cancelled" : "failed",
        error: error.childError ?? null,
      }),
    );
  }
  if (error?.code === "step_timeout") throw host.noteRecordedFailure(new StepTimeoutError(error.message));
  throw host.revive(error);
}

async function startChild(
  host: StepHost,
  id: string,
  workflow: AnyWorkflow,
  input: unknown,
  options: { id?: string },
): Promise<ChildRun> {
  const { seq, recorded, isReclaim } = host.reach(id, "start");
  const compose = composeOf(host);
  const answer = (childId: string): ChildRun => ({
    id: childId,
    get statusToken() {
      return compose.statusToken(childId);
    },
  });
  if (recorded?.status === "completed") return answer(((await host.answer(recorded)) as { id: string }).id);
  if (host.stopping) return never();
  return host.trace(
    { stepId: id, kind: "start", attempt: 1, isReclaim },
    async () => {
      const child = compose.prepare(workflow, input, options.id ?? childIdFor(host.runId, id));
      const start = {
        id: child.id,
        workflow: child.workflow,
        inputJson: child.inputJson,
        version: child.version,
        concurrencyKey: child.concurrencyKey,
        singletonKey: child.singletonKey,
        deadlineInMs: child.deadlineInMs,
        rateKey: child.rateKey,
        priority: child.priority,
        followups: child.followups,
      };
      // Idempotent on the child's id: a replay after a lost claim finds the child it started.
      const resultJson = JSON.stringify({ id: child.id });
      const written = await host.track(() =>
        host.write({ stepId: id, seq, kind: "start", status: "completed", attempt: 1, resultJson, start }),
      );
      if (!written) return never<ChildRun>();
      if (!written.conflict && written.notStarted) throw notStartedError(id, child.id, written.notStarted);
      await host.failpoint?.("start.after-insert");
      return answer(written.conflict ? (written.recorded.result as { id: string }).id : child.id);
    },
    () => ({ outcome: "completed" }),
  );
}

/** Why a `start` could not insert its child, as the body sees it. */
function notStartedError(stepId: string, childId: string, why: ChildNotStarted): RunStateConflictError {
  const prefix = `step "${stepId}" could not start child run "${childId}"`;
  if (why.reason === "singleton") {
    const holder = why.activeRunId === null ? "another run" : `run "${why.activeRunId}"`;
    return new RunStateConflictError(`${prefix}: ${holder} holds its singleton key`, {
      activeRunId: why.activeRunId ?? undefined,
    });
  }
  return new RunStateConflictError(`${prefix}: a run with that id exists with another workflow or input`);
}
