// `ctx.step.waitFor`: polls `poll()` until `ready(value)`, every `every` (growing by
// `pollBackoff`), until `timeout` from the first call. Short delays are waited here; a longer one
// parks the run with its poll count and deadline, and the claim that wakes it polls again.
import { toBoundedMs } from "../duration";
import type { StepHost } from "../engine/run/step-host";
import { InvalidInputError, serializeError, StepTimeoutError } from "../errors";
import type { StepRecord } from "../store";
import type { WaitForOptions } from "../types";
import { resultJson } from "./effect-body";
import { never } from "./never";
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

export async function waitFor<T>(host: StepHost, id: string, options: WaitForOptions<T>): Promise<T> {
  const everyMs = toBoundedMs(options.every, "every");
  const timeoutMs = toBoundedMs(options.timeout, "timeout");
  const leaseMs = toBoundedMs(options.lease ?? host.settings.leaseMs, "lease");
  const factor = options.pollBackoff?.factor ?? 1;
  const maxDelay = options.pollBackoff?.maxDelay;
  const maxDelayMs = maxDelay === undefined ? null : toBoundedMs(maxDelay, "pollBackoff.maxDelay");
  if (!(factor >= 1)) throw new InvalidInputError(`waitFor "${id}": pollBackoff.factor must be >= 1`);
  const { seq, recorded, isReclaim } = host.reach(id, "poll");
  const known = host.answer(recorded);
  if (known) return known;
  const plan: PollPlan<T> = { id, seq, options, everyMs, timeoutMs, leaseMs, factor, maxDelayMs };
  return traceWait(host, id, "poll", isReclaim, () => pollUntilReady(host, plan, recorded));
}

/** The polls of this execution: until ready, the deadline, a park or a yield. */
async function pollUntilReady<T>(host: StepHost, plan: PollPlan<T>, recorded: StepRecord | undefined): Promise<T> {
  const { id, seq, leaseMs } = plan;
  if (host.fits(leaseMs) === "never") {
    const error = serializeError(host.neverFits(id, leaseMs));
    const failed = { stepId: id, seq, kind: "poll", status: "failed", attempt: 1, error } as const;
    const written = await host.track(() => host.write({ ...failed, polls: recorded?.polls ?? 0 }));
    if (!written) return never();
    throw host.revive(error);
  }
  const state: PollState = {
    polls: recorded?.polls ?? 0,
    failures: 0,
    // The deadline counts from the first call; before the row exists it is this execution's.
    deadline: recorded?.deadlineAt ?? new Date(host.now().getTime() + plan.timeoutMs),
    wakeAt: recorded?.wakeAt ?? null,
    stored: Boolean(recorded),
  };
  for (;;) {
    if (host.stopping) return never();
    if (state.wakeAt && !(await waitUntil(host, state.wakeAt, { step_id: id }, "poll", id))) return never();
    if (host.now() >= state.deadline) return failAtDeadline(host, plan, state);
    const room = host.fits(leaseMs);
    if (room === "stopping") return never();
    if (room !== "fits") return host.stop({ kind: "yield", stepId: id });
    let value: T | undefined;
    let pollError: unknown = null;
    try {
      value = await host.track(async () => plan.options.poll());
    } catch (error) {
      pollError = error;
    }
    if (host.stopping) return never();
    state.polls++;
    if (pollError === null && plan.options.ready(value as T)) return recordReady(host, plan, state, value);
    state.failures = pollError === null ? 0 : state.failures + 1;
    if (!(await waitBeforeNextPoll(host, plan, state, pollError))) return never();
  }
}

/** The deadline passed before `ready`: the step fails with a StepTimeoutError. */
async function failAtDeadline<T>(host: StepHost, plan: PollPlan<T>, state: PollState): Promise<never> {
  const { id, seq } = plan;
  const error = new StepTimeoutError(
    `waitFor "${id}" was not ready after ${state.polls} polls, by its deadline ${state.deadline.toISOString()}`,
  );
  const written = await host.track(() =>
    host.write({
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
  throw host.revive(serializeError(error));
}

/** `ready(value)`: the value is the step's receipt (or the one recorded first). */
async function recordReady<T>(host: StepHost, plan: PollPlan<T>, state: PollState, value: T | undefined): Promise<T> {
  const { id, seq } = plan;
  const json = resultJson(host, value, id);
  const written = await host.track(() =>
    host.write({
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
  host: StepHost,
  plan: PollPlan<T>,
  state: PollState,
  pollError: unknown,
): Promise<boolean> {
  const { id, seq } = plan;
  const grown = plan.everyMs * plan.factor ** (state.polls - 1) * Math.max(2, plan.factor) ** state.failures;
  const untilDeadline = state.deadline.getTime() - host.now().getTime();
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
  if (!host.waitsHere(delayMs, plan.leaseMs)) {
    return host.stop({ kind: "suspend", waits: [row], waitingFor: { kind: "poll", name: id } });
  }
  if (!state.stored) {
    const written = await host.track(() =>
      host.write({
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
  await host.track(() => pause(delayMs, host.signal));
  state.wakeAt = null;
  return true;
}
