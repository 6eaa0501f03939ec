import { toMs } from "../duration";
import { type Execution, never } from "../engine/execution";
import type { StepRecorder } from "../engine/step-recorder";
import { InvalidInputError, serializeError, StepTimeoutError } from "../errors";
import { storableName } from "../names";
import type { Wait } from "../store";
import type { Duration, WaitForOptions, WaitForSignalOptions } from "../types";
import { pause } from "./pause";

/**
 * The steps that wait: `sleep`, `sleepUntil`, `waitForSignal`, `waitFor`. A wait that fits in
 * process (below `inProcessWait` and within the budget) is waited here; a longer one parks the
 * run with one statement, and the claim that wakes it answers the wait (durable_resolve_waits).
 */
export function createWaitSteps(exec: Execution, recorder: StepRecorder) {
  const { settings } = exec;

  /** Waits until `wakeAt` by the database clock: here if short, else by parking the run. */
  async function waitUntil(wakeAt: Date, wait: Wait, kind: "sleep" | "poll" | "retry", name: string): Promise<boolean> {
    const ms = wakeAt.getTime() - exec.dbNow().getTime();
    if (ms <= 0) return true;
    if (!exec.waitsInProcess(ms)) {
      exec.requestStop({ kind: "suspend", waits: [wait], waitingFor: { kind, name } });
      return false;
    }
    await exec.track(() => pause(ms, exec.abort.signal));
    return !exec.isStopping;
  }

  /**
   * A wait executed by this execution (not answered from its receipt) runs inside a
   * `durable.step` span (engine/tracing.ts): "completed" when it returns, "failed" when it throws,
   * or the stop's outcome ("suspended") when it parks the run.
   */
  function traced<T>(id: string, kind: "sleep" | "signal" | "poll", isReclaim: boolean, fn: () => Promise<T>) {
    return recorder.traced({ stepId: id, kind, attempt: 1, isReclaim }, fn, () => ({ outcome: "completed" }));
  }

  async function sleepFor(id: string, wakeInMs: () => number): Promise<void> {
    const { seq, recorded, isReclaim } = exec.reach(id, "sleep");
    if (exec.isStopping) return never();
    if (recorded) {
      // The wake time was stored at the first call; a replay never moves it. Once it has passed,
      // the receipt answers.
      if (!recorded.wakeAt || recorded.wakeAt.getTime() <= exec.dbNow().getTime()) return;
      const wakeAt = recorded.wakeAt;
      return traced(id, "sleep", isReclaim, async () => {
        if (await waitUntil(wakeAt, { step_id: id }, "sleep", id)) return;
        return never();
      });
    }
    return traced(id, "sleep", isReclaim, () => firstSleep(id, seq, wakeInMs));
  }

  async function firstSleep(id: string, seq: number, wakeInMs: () => number): Promise<void> {
    // skipSleeps (testing only): the sleep is due now, so it is recorded completed and not waited.
    const ms = settings.skipSleeps ? 0 : Math.max(0, wakeInMs());
    if (!exec.waitsInProcess(ms)) {
      const wait: Wait = { step_id: id, seq, kind: "sleep", wake_in_ms: ms };
      return exec.stop({ kind: "suspend", waits: [wait], waitingFor: { kind: "sleep", name: id } });
    }
    // Short: store the wake time (as a completed receipt that still holds until then), then wait here.
    const written = await exec.track(() =>
      recorder.write({ stepId: id, seq, kind: "sleep", status: "completed", attempt: 1, wakeInMs: ms }),
    );
    if (!written) return never();
    await exec.track(() => pause(ms, exec.abort.signal));
    if (exec.isStopping) return never();
  }

  return {
    sleep(id: string, duration: Duration): Promise<void> {
      const ms = toMs(duration, "sleep duration");
      return sleepFor(id, () => ms);
    },

    sleepUntil(id: string, date: Date | string): Promise<void> {
      const at = new Date(date);
      if (Number.isNaN(at.getTime())) throw new InvalidInputError(`sleepUntil "${id}": not a date: ${String(date)}`);
      return sleepFor(id, () => at.getTime() - exec.dbNow().getTime());
    },

    /**
     * Takes the oldest delivery of `name` that no earlier wait of the run took (the mailbox, rule
     * 16): from what the claim loaded, in this process; otherwise the run parks, and the claim
     * that wakes it takes the delivery in SQL (durable_resolve_waits).
     */
    async waitForSignal<T = unknown>(name: string, options: WaitForSignalOptions<T> = {}): Promise<T | null> {
      const timeoutMs = options.timeout === undefined ? null : toMs(options.timeout, "timeout");
      const stepId = options.id ?? name;
      if (stepId !== name) storableName(name, "a signal name");
      const { seq, recorded, isReclaim } = exec.reach(stepId, "signal");
      const parse = (result: unknown): T | null => {
        const { payload, timedOut } = (result ?? {}) as { payload?: unknown; timedOut?: boolean };
        if (timedOut) return null;
        return options.schema ? options.schema.parse(payload) : (payload as T);
      };
      if (recorded?.status === "completed") return parse(await recorder.resultOf(recorded));
      if (exec.isStopping) return never();
      return traced(stepId, "signal", isReclaim, async () => {
        // A wait whose deadline passed is answered by the claim that wakes it, which knows whether
        // a delivery landed before the deadline (durable_resolve_waits); here we would not.
        const expired = recorded?.deadlineAt != null && exec.dbNow() >= recorded.deadlineAt;
        const delivery = expired ? undefined : exec.takeDelivery(name);
        if (delivery) {
          // Already in the mailbox: the receipt takes it in the same statement.
          const result = { payload: delivery.payload, signalSeq: delivery.seq };
          const written = await exec.track(() =>
            recorder.write({
              stepId,
              seq,
              kind: "signal",
              status: "completed",
              attempt: 1,
              resultJson: JSON.stringify(result),
              signalName: name,
              signalSeq: delivery.seq,
            }),
          );
          if (!written) return never();
          return parse(written.conflict ? written.recorded.result : result);
        }
        const wait: Wait = recorded
          ? { step_id: stepId }
          : { step_id: stepId, seq, kind: "signal", deadline_in_ms: timeoutMs, signal_name: name };
        return exec.stop<T | null>({ kind: "suspend", waits: [wait], waitingFor: { kind: "signal", name } });
      });
    },

    async waitFor<T>(id: string, options: WaitForOptions<T>): Promise<T> {
      const everyMs = toMs(options.every, "every");
      const timeoutMs = toMs(options.timeout, "timeout");
      const leaseMs = toMs(options.lease ?? settings.leaseMs, "lease");
      const factor = options.pollBackoff?.factor ?? 1;
      const maxDelayMs =
        options.pollBackoff?.maxDelay === undefined ? null : toMs(options.pollBackoff.maxDelay, "pollBackoff.maxDelay");
      if (!(factor >= 1)) throw new InvalidInputError(`waitFor "${id}": pollBackoff.factor must be >= 1`);
      const { seq, recorded, isReclaim } = exec.reach(id, "poll");
      const known = recorder.answer(recorded);
      if (known.done) return known.value;
      return traced(id, "poll", isReclaim, async (): Promise<T> => {
        if (!exec.everFits(leaseMs)) {
          const error = serializeError(exec.leaseNeverFits(id, leaseMs));
          const failed = { stepId: id, seq, kind: "poll", status: "failed", attempt: 1, error } as const;
          const written = await exec.track(() => recorder.write({ ...failed, polls: recorded?.polls ?? 0 }));
          if (!written) return never();
          throw recorder.revive(error);
        }
        let polls = recorded?.polls ?? 0;
        let failures = 0;
        // The deadline counts from the first call; before the row exists it is this execution's.
        const deadline = recorded?.deadlineAt ?? new Date(exec.dbNow().getTime() + timeoutMs);
        let wakeAt = recorded?.wakeAt ?? null;
        let stored = Boolean(recorded);

        for (;;) {
          if (exec.isStopping) return never();
          if (wakeAt && !(await waitUntil(wakeAt, { step_id: id }, "poll", id))) return never();
          if (exec.dbNow() >= deadline) {
            const error = new StepTimeoutError(
              `waitFor "${id}" was not ready after ${polls} polls, by its deadline ${deadline.toISOString()}`,
            );
            const written = await exec.track(() =>
              recorder.write({
                stepId: id,
                seq,
                kind: "poll",
                status: "failed",
                attempt: 1,
                polls,
                error: serializeError(error),
              }),
            );
            if (!written) return never();
            throw recorder.revive(serializeError(error));
          }
          if (!exec.fits(leaseMs)) return exec.stop({ kind: "yield", stepId: id });
          let value: T | undefined;
          let pollError: unknown = null;
          try {
            value = await exec.track(async () => options.poll());
          } catch (error) {
            pollError = error;
          }
          if (exec.isStopping) return never();
          polls++;
          if (pollError === null && options.ready(value as T)) {
            const json = recorder.json(value, id);
            const written = await exec.track(() =>
              recorder.write({
                stepId: id,
                seq,
                kind: "poll",
                status: "completed",
                attempt: 1,
                polls,
                resultJson: json,
              }),
            );
            if (!written) return never();
            return written.conflict ? (written.recorded.result as T) : JSON.parse(json);
          }
          failures = pollError === null ? 0 : failures + 1;
          const grown = everyMs * factor ** (polls - 1) * Math.max(2, factor) ** failures;
          const untilDeadline = deadline.getTime() - exec.dbNow().getTime();
          const delayMs = Math.max(0, Math.min(maxDelayMs ?? Infinity, grown, untilDeadline));
          const row = {
            step_id: id,
            seq,
            kind: "poll" as const,
            wake_in_ms: delayMs,
            polls,
            deadline_in_ms: stored ? null : untilDeadline,
            error: pollError === null ? null : serializeError(pollError),
          };
          if (!exec.waitsInProcess(delayMs, leaseMs)) {
            return exec.stop({ kind: "suspend", waits: [row], waitingFor: { kind: "poll", name: id } });
          }
          if (!stored) {
            // The deadline must be stored before waiting here, so a crash cannot make it slide.
            const written = await exec.track(() =>
              recorder.write({
                stepId: id,
                seq,
                kind: "poll",
                status: "waiting",
                attempt: 1,
                polls,
                wakeInMs: delayMs,
                deadlineAt: deadline,
              }),
            );
            if (!written) return never();
            stored = true;
          }
          await exec.track(() => pause(delayMs, exec.abort.signal));
          wakeAt = null;
        }
      });
    },
  };
}
