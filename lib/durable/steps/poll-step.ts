// `ctx.step.waitFor`: polls `poll()` until `ready(value)`, every `every` (growing by
// `pollBackoff`), until `timeout` from the first call. Short delays are waited here; a longer one
// parks the run with its poll count and deadline, and the claim that wakes it polls again.
import { toBoundedMs } from "../duration";
import { type Execution, never } from "../engine/run/execution";
import type { StepRecorder } from "../engine/run/step-recorder";
import { InvalidInputError, serializeError, StepTimeoutError } from "../errors";
import type { StepRecord } from "../store";
import type { WaitForOptions } from "../types";
import { pause } from "./pause";
import { traceWait, waitUntil } from "./wait-until";

/** A poll step's options in ms, checked. */
interface PollPlan<T> {
  id: string;
  seq: number;
  options: WaitForOptions<T>;
  everyMs: number;
  timeoutMs: number;
  leaseMs: number;
  factor: number;
  maxDelayMs: number | null;
}

/** Where the polling stands: counted polls and failures, the deadline, the next wake time. */
interface PollState {
  polls: number;
  failures: number;
  deadline: Date;
  wakeAt: Date | null;
  /** Whether the step's row (and so its deadline) is stored. */
  stored: boolean;
}

export async function waitFor<T>(
  exec: Execution,
  recorder: StepRecorder,
  id: string,
  options: WaitForOptions<T>,
): Promise<T> {
  const everyMs = toBoundedMs(options.every, "every");
  const timeoutMs = toBoundedMs(options.timeout, "timeout");
  const leaseMs = toBoundedMs(options.lease ?? exec.settings.leaseMs, "lease");
  const factor = options.pollBackoff?.factor ?? 1;
  const maxDelay = options.pollBackoff?.maxDelay;
  const maxDelayMs = maxDelay === undefined ? null : toBoundedMs(maxDelay, "pollBackoff.maxDelay");
  if (!(factor >= 1)) throw new InvalidInputError(`waitFor "${id}": pollBackoff.factor must be >= 1`);
  const { seq, recorded, isReclaim } = exec.reach(id, "poll");
  const known = recorder.answer(recorded);
  if (known.done) return known.value;
  const plan: PollPlan<T> = { id, seq, options, everyMs, timeoutMs, leaseMs, factor, maxDelayMs };
  return traceWait(recorder, id, "poll", isReclaim, () => pollUntilReady(exec, recorder, plan, recorded));
}

/** The polls of this execution: until ready, the deadline, a park or a yield. */
async function pollUntilReady<T>(
  exec: Execution,
  recorder: StepRecorder,
  plan: PollPlan<T>,
  recorded: StepRecord | undefined,
): Promise<T> {
  const { id, seq, leaseMs } = plan;
  if (!exec.everFits(leaseMs)) {
    const error = serializeError(exec.leaseNeverFits(id, leaseMs));
    const failed = { stepId: id, seq, kind: "poll", status: "failed", attempt: 1, error } as const;
    const written = await exec.track(() => recorder.write({ ...failed, polls: recorded?.polls ?? 0 }));
    if (!written) return never();
    throw recorder.revive(error);
  }
  const state: PollState = {
    polls: recorded?.polls ?? 0,
    failures: 0,
    // The deadline counts from the first call; before the row exists it is this execution's.
    deadline: recorded?.deadlineAt ?? new Date(exec.dbNow().getTime() + plan.timeoutMs),
    wakeAt: recorded?.wakeAt ?? null,
    stored: Boolean(recorded),
  };
  for (;;) {
    if (exec.isStopping) return never();
    if (state.wakeAt && !(await waitUntil(exec, state.wakeAt, { step_id: id }, "poll", id))) return never();
    if (exec.dbNow() >= state.deadline) return failAtDeadline(exec, recorder, plan, state);
    if (!exec.fits(leaseMs)) return exec.stop({ kind: "yield", stepId: id });
    let value: T | undefined;
    let pollError: unknown = null;
    try {
      value = await exec.track(async () => plan.options.poll());
    } catch (error) {
      pollError = error;
    }
    if (exec.isStopping) return never();
    state.polls++;
    if (pollError === null && plan.options.ready(value as T)) return recordReady(exec, recorder, plan, state, value);
    state.failures = pollError === null ? 0 : state.failures + 1;
    if (!(await waitBeforeNextPoll(exec, recorder, plan, state, pollError))) return never();
  }
}

/** The deadline passed before `ready`: the step fails with a StepTimeoutError. */
async function failAtDeadline<T>(
  exec: Execution,
  recorder: StepRecorder,
  plan: PollPlan<T>,
  state: PollState,
): Promise<never> {
  const { id, seq } = plan;
  const error = new StepTimeoutError(
    `waitFor "${id}" was not ready after ${state.polls} polls, by its deadline ${state.deadline.toISOString()}`,
  );
  const written = await exec.track(() =>
    recorder.write({
      stepId: id,
      seq,
      kind: "poll",
      status: "failed",
      attempt: 1,
      polls: state.polls,
      error: serializeError(error),
    }),
  );
  if (!written) return never();
  throw recorder.revive(serializeError(error));
}

/** `ready(value)`: the value is the step's receipt (or the one recorded first). */
async function recordReady<T>(
  exec: Execution,
  recorder: StepRecorder,
  plan: PollPlan<T>,
  state: PollState,
  value: T | undefined,
): Promise<T> {
  const { id, seq } = plan;
  const json = recorder.json(value, id);
  const written = await exec.track(() =>
    recorder.write({
      stepId: id,
      seq,
      kind: "poll",
      status: "completed",
      attempt: 1,
      polls: state.polls,
      resultJson: json,
    }),
  );
  if (!written) return never();
  return written.conflict ? (written.recorded.result as T) : JSON.parse(json);
}

/**
 * Waits out the delay before the next poll: here when it fits (after storing the deadline, so a
 * crash cannot make it slide), else parks the run. False when the execution stopped.
 */
async function waitBeforeNextPoll<T>(
  exec: Execution,
  recorder: StepRecorder,
  plan: PollPlan<T>,
  state: PollState,
  pollError: unknown,
): Promise<boolean> {
  const { id, seq } = plan;
  const grown = plan.everyMs * plan.factor ** (state.polls - 1) * Math.max(2, plan.factor) ** state.failures;
  const untilDeadline = state.deadline.getTime() - exec.dbNow().getTime();
  const delayMs = Math.max(0, Math.min(plan.maxDelayMs ?? Infinity, grown, untilDeadline));
  const row = {
    step_id: id,
    seq,
    kind: "poll" as const,
    wake_in_ms: delayMs,
    polls: state.polls,
    deadline_in_ms: state.stored ? null : untilDeadline,
    error: pollError === null ? null : serializeError(pollError),
  };
  if (!exec.waitsInProcess(delayMs, plan.leaseMs)) {
    return exec.stop({ kind: "suspend", waits: [row], waitingFor: { kind: "poll", name: id } });
  }
  if (!state.stored) {
    const written = await exec.track(() =>
      recorder.write({
        stepId: id,
        seq,
        kind: "poll",
        status: "waiting",
        attempt: 1,
        polls: state.polls,
        wakeInMs: delayMs,
        deadlineAt: state.deadline,
      }),
    );
    if (!written) return false;
    state.stored = true;
  }
  await exec.track(() => pause(delayMs, exec.abort.signal));
  state.wakeAt = null;
  return true;
}
