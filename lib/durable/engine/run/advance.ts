import type { Span } from "@opentelemetry/api";
import { DecryptionError, InvalidInputError, serializeError } from "../../errors";
import { toJsonText } from "../../json";
import { createStepApi } from "../../steps/step-api";
import {
  type ClaimedRun,
  type ClaimRequest,
  continueRun,
  endOverdueRun,
  type FinishResult,
  finishRun,
  finishRunAndClaim,
  type RunEnd,
  releaseRun,
  releaseUnreadable,
  suspendRun,
} from "../../store";
import type { AnyWorkflow, WorkflowContext } from "../../types";
import { openClaim, sealError, sealOutcome, sealWaits } from "../payloads";
import { wingStepMembers } from "../wings";
import { buildStepHost } from "./build-step-host";
import { continueAsNew, successorTaken } from "./continue-as-new";
import { Execution, type ExecutionSettings, PAST_RUN_DEADLINE, type Stop } from "./execution";
import { failpoint } from "./failpoints";
import { createPatchCalls } from "./patches";
import { createStepRecorder, type StepRecorder } from "./step-recorder";
import { spanEvent, TRACE_EVENTS, withRunSpan } from "./tracing";

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
 * A loop that claims again after this run: the run's completion (or failure) carries the loop's
 * next claim in its statement (docs/decisions.md, "Chained claims").
 */
export interface ClaimChain {
  /** The claim to send with the completion; null when the loop will not claim again. */
  request(): ClaimRequest | null;
  /**
   * What the chained claim answered: the next run, which the loop must advance (it holds its
   * lease now), or null when nothing was due. Undefined: no claim was sent with the completion, or
   * the claim stopped at a bound with runs it did not reach (docs/sql.md, "durable_claim_run"):
   * the loop claims on its own.
   */
  claimed?: ClaimedRun | null;
  /** The child runs this run's suspension started (`invoke`): set when it parked on them. */
  started?: string[];
}

/**
 * Runs one claimed run inside the invocation's budget: replays the body from the top (steps with
 * receipts answer from the ledger), executes the next steps, and ends with exactly one write for
 * the way it stopped: complete, fail, park or give back. A suspended body is abandoned, not
 * awaited (docs/rules.md, rule 11b): its pending step promises never settle. All of it runs in a
 * `durable.run` span (engine/run/tracing.ts), whose events say what only this pass knows: a suspension,
 * a refused write, an outcome conflict of the last receipt.
 */
export async function advanceClaimedRun(
  settings: ExecutionSettings,
  workflow: AnyWorkflow,
  sealed: ClaimedRun,
  deadline: number,
  budgetMs: number,
  release?: AbortSignal,
  chain?: ClaimChain,
): Promise<AdvanceOutcome> {
  const claim = await openOrGiveBack(settings, sealed);
  return withRunSpan(claim, async (span) => {
    const exec = new Execution(settings, claim, deadline, budgetMs, release);
    let outcome: AdvanceOutcome;
    try {
      outcome = await advance(exec, workflow, span, chain);
    } finally {
      exec.dispose();
    }
    if (outcome === "lost") {
      // A step's write, a heartbeat or a stream append found the claim lost, or the final write did.
      const stop = exec.stopReason;
      spanEvent(span, TRACE_EVENTS.fenceRejected, () => ({
        "durable.reason": stop?.kind === "lost" ? stop.reason : "the run's final write was refused",
      }));
    }
    return outcome;
  });
}

/** How long a run whose payloads no key opens waits before a claim takes it again. */
export const UNREADABLE_RETRY_MS = 60_000;

/**
 * The claim with its payloads opened (engine/payloads.ts). When a payload names a key this
 * deployment lacks, nothing of the run is written: it is given back, due again in a minute
 * (durable_release_unreadable), and the DecryptionError naming the key is logged and thrown with
 * the run's id as `runId` (docs/guide/encryption.md, "A missing key").
 */
async function openOrGiveBack(settings: ExecutionSettings, claim: ClaimedRun): Promise<ClaimedRun> {
  try {
    return await openClaim(settings.codec, claim);
  } catch (error) {
    if (!DecryptionError.is(error)) throw error;
    const { id, fence } = claim.run;
    settings.log(`[${id}] not advanced, given back for ${UNREADABLE_RETRY_MS / 1000} s: ${error.message}`);
    await releaseUnreadable(settings.db, id, fence, error.keyId, UNREADABLE_RETRY_MS).catch((cause) =>
      settings.log(`[${id}] could not be given back, its lease will expire: ${String(cause)}`),
    );
    throw new DecryptionError({ keyId: error.keyId, reason: error.reason, runId: id }, { cause: error });
  }
}

async function advance(
  exec: Execution,
  workflow: AnyWorkflow,
  span: Span,
  chain: ClaimChain | undefined,
): Promise<AdvanceOutcome> {
  const { settings, claim } = exec;
  const recorder = createStepRecorder(exec);
  const log = (...args: unknown[]) => settings.log(`[${claim.run.id}] ${args.map(String).join(" ")}`);
  const ctx: WorkflowContext = {
    runId: claim.run.id,
    input: claim.run.input,
    step: createStepApi(buildStepHost(exec, recorder), workflow.callbacks, wingStepMembers()),
    abortSignal: exec.abort.signal,
    stream: (stepId) => exec.streams.writer(stepId),
    setMetadata: (patch) => exec.metadata.set(patch),
    ...createPatchCalls(exec, recorder),
    continueAsNew: (input) => continueAsNew(exec, workflow, input),
    log,
  };
  const body: Promise<BodyEnd> = Promise.resolve()
    .then(() => workflow.run(ctx, claim.run.input))
    .then(
      (value) => ({ kind: "returned" as const, value }),
      (error) => ({ kind: "threw" as const, error }),
    );

  let settled = false;
  void body.then(() => (settled = true));
  const first = await Promise.race([body, exec.stopped.then((stop) => ({ kind: "stopped" as const, stop }))]);
  if (first.kind === "stopped" || exec.isStopping) {
    let stop = first.kind === "stopped" ? first.stop : await exec.stopped;
    // One turn of the event loop shows whether the body settled although a step suspended it
    // (it raced or swallowed a step): the run stays suspended all the same (docs/rules.md, rule 11b).
    await new Promise((resolve) => setImmediate(resolve));
    // Waits reached after the first suspension (a Promise.all of invokes) joined it meanwhile.
    if (stop.kind === "suspend" && exec.stopReason) stop = exec.stopReason;
    // A body that threw out a failed receipt's error has failed: every replay would throw it again,
    // however long a sibling it ran beside waits (a Promise.all of invokes, one child failed).
    const end = settled ? await body : null;
    if (stop.kind === "suspend" && end?.kind === "threw" && exec.isRecordedFailure(end.error)) {
      return fail(exec, recorder, span, end.error, chain);
    }
    if (settled && (stop.kind === "suspend" || stop.kind === "yield")) {
      log("the workflow body settled while suspended (did it race or swallow a step?); the run stays suspended");
    }
    return applyStop(exec, recorder, span, stop, chain);
  }
  return first.kind === "returned"
    ? complete(exec, recorder, span, workflow, first.value, chain)
    : fail(exec, recorder, span, first.error, chain);
}

async function complete(
  exec: Execution,
  recorder: StepRecorder,
  span: Span,
  workflow: AnyWorkflow,
  value: unknown,
  chain: ClaimChain | undefined,
): Promise<AdvanceOutcome> {
  let outputJson: string;
  try {
    const parsed = workflow.output ? workflow.output.safeParse(value) : { success: true as const, data: value };
    if (!parsed.success) {
      throw new InvalidInputError(`the output of workflow "${workflow.name}" does not match its schema`, {
        issues: parsed.error.issues,
      });
    }
    const plain = toJsonText(parsed.data, { limit: exec.settings.maxResultBytes });
    outputJson = await exec.settings.codec.sealJson(exec.runId, plain);
  } catch (error) {
    return fail(exec, recorder, span, error, chain);
  }
  const warnings = unreachedWarnings(exec);
  return finish(exec, recorder, span, "completed", { status: "completed", outputJson }, warnings, chain);
}

/** The receipts the execution that completes the run never reached (docs/rules.md, rule 13). */
const unreachedWarnings = (exec: Execution) =>
  exec
    .unreachedSteps()
    .map((id) => `step "${id}" has a receipt but was not reached by the execution that completed the run`);

async function fail(
  exec: Execution,
  recorder: StepRecorder,
  span: Span,
  error: unknown,
  chain: ClaimChain | undefined,
): Promise<AdvanceOutcome> {
  const stored = await sealError(exec.settings.codec, exec.runId, serializeError(error));
  return finish(exec, recorder, span, "failed", { status: "failed", error: stored }, [], chain);
}

/**
 * Ends the run, with the last held-back receipt in the same statement (the completion's round
 * trip), and the loop's next claim too when it chains one.
 */
function finish(
  exec: Execution,
  recorder: StepRecorder,
  span: Span,
  outcome: "completed" | "failed",
  end: RunEnd,
  warnings: string[],
  chain: ClaimChain | undefined,
): Promise<AdvanceOutcome> {
  return write(exec, async () => {
    if (!recorder.holding) await recorder.flush(); // a flush already under way lands first
    const held = recorder.takeHeld();
    const last = held && (await sealOutcome(exec.settings.codec, exec.runId, held));
    const next = chain?.request() ?? null;
    const metadata = exec.metadata.take();
    let result: FinishResult;
    if (next) {
      const answer = await finishRunAndClaim(exec.db, exec.runId, exec.fence, end, warnings, last, next, metadata);
      result = answer.finished;
      chain!.claimed = answer.next;
    } else {
      result = await finishRun(exec.db, exec.runId, exec.fence, end, warnings, last, metadata);
    }
    if (result === "finished") return outcome;
    if (result === "lost") return "lost";
    // The last step had another outcome recorded first: replay from it rather than end on ours.
    spanEvent(span, TRACE_EVENTS.outcomeConflict, () => ({
      "durable.step_id": last?.stepId ?? "",
      "durable.late_status": last?.status ?? "",
    }));
    return (await releaseRun(exec.db, exec.runId, exec.fence, last?.stepId ?? null)) ? "yielded" : "lost";
  });
}

/**
 * Ends the run as completed with its successor inserted, in one statement under the fence
 * (engine/run/continue-as-new.ts), the held-back receipt riding on it as on an end. No claim is
 * chained onto it: the loop claims on its own, and may take the successor.
 */
function continueRunAsNew(
  exec: Execution,
  recorder: StepRecorder,
  span: Span,
  successor: Extract<Stop, { kind: "continue" }>["successor"],
): Promise<AdvanceOutcome> {
  return write(exec, async () => {
    if (!recorder.holding) await recorder.flush();
    const held = recorder.takeHeld();
    const codec = exec.settings.codec;
    const last = held && (await sealOutcome(codec, exec.runId, held));
    // The successor's input is its own payload: sealed under its id, as a child's is.
    const sealed = { ...successor, inputJson: await codec.sealJson(successor.id, successor.inputJson) };
    const taken = await sealError(codec, exec.runId, successorTaken(exec.runId, successor.id));
    const warnings = unreachedWarnings(exec);
    const metadata = exec.metadata.take();
    const result = await continueRun(exec.db, exec.runId, exec.fence, sealed, taken, warnings, last, metadata);
    if (result === "continued") return "completed";
    if (result === "taken") return "failed";
    if (result === "lost") return "lost";
    spanEvent(span, TRACE_EVENTS.outcomeConflict, () => ({
      "durable.step_id": last?.stepId ?? "",
      "durable.late_status": last?.status ?? "",
    }));
    return (await releaseRun(exec.db, exec.runId, exec.fence, last?.stepId ?? null)) ? "yielded" : "lost";
  });
}

async function applyStop(
  exec: Execution,
  recorder: StepRecorder,
  span: Span,
  stop: Stop,
  chain: ClaimChain | undefined,
): Promise<AdvanceOutcome> {
  if (stop.kind === "lost") return "lost";
  if (stop.kind === "abandon" && stop.reason === PAST_RUN_DEADLINE) {
    // The run is ended now rather than at the next claim; its owner writes nothing else.
    return write(exec, async () => ((await endOverdueRun(exec.db, exec.runId)) ? "failed" : "lost"));
  }
  if (stop.kind === "abandon") {
    exec.settings.log(`[${exec.runId}] abandoned: ${stop.reason}`);
    return "abandoned";
  }
  if (stop.kind === "fail") return fail(exec, recorder, span, stop.error, chain);
  if (stop.kind === "continue") return continueRunAsNew(exec, recorder, span, stop.successor);
  // Parking or giving the run back: its held-back receipt is written first.
  if (recorder.holding && !(await recorder.flush())) {
    const now = exec.stopReason;
    if (now?.kind === "lost") return "lost";
    if (now?.kind !== "yield") return "abandoned";
    stop = now;
  }
  if (stop.kind === "yield") {
    const { stepId } = stop;
    return write(exec, async () => ((await releaseRun(exec.db, exec.runId, exec.fence, stepId)) ? "yielded" : "lost"));
  }
  const { waits, waitingFor } = stop as Extract<Stop, { kind: "suspend" }>;
  return write(exec, async () => {
    await failpoint("suspend.before");
    const sealed = await sealWaits(exec.settings.codec, exec.runId, waits);
    if (!(await suspendRun(exec.db, exec.runId, exec.fence, sealed, waitingFor, exec.metadata.take()))) return "lost";
    await failpoint("suspend.after");
    if (chain) chain.started = waits.flatMap((wait) => (wait.start ? [wait.start.id] : []));
    spanEvent(span, TRACE_EVENTS.suspension, () => ({
      "durable.waiting_for": waitingFor.kind,
      "durable.waiting_for_name": waitingFor.name,
      "durable.waits": waits.length,
    }));
    return "waiting";
  });
}

/** The final write of an invocation: never after the deadline; a failed write leaves the lease to expire. */
async function write(exec: Execution, statement: () => Promise<AdvanceOutcome>): Promise<AdvanceOutcome> {
  if (exec.remainingMs() <= 0) return "abandoned";
  try {
    await failpoint("finish.before");
    const outcome = await statement();
    await failpoint("finish.after");
    return outcome;
  } catch (error) {
    exec.settings.log(
      `[${exec.runId}] the final write failed, the run will be healed when its lease expires: ${String(error)}`,
    );
    return "abandoned";
  }
}
