import { toBoundedMs, toInstant } from "../duration";
import type { StepHost } from "../engine/run/step-host";
import { storableName } from "../names";
import type { StepRecord, Wait } from "../store";
import type { Duration, WaitForOptions, WaitForSignalOptions } from "../types";
import { never } from "./never";
import { pause } from "./pause";
import { waitFor } from "./poll-step";
import { traceWait, waitUntil } from "./wait-until";

/**
 * The steps that wait: `sleep`, `sleepUntil`, `waitForSignal`, `waitFor` (poll-step.ts). A wait
 * that fits in process (below `inProcessWait` and within the budget) is waited here; a longer one
 * parks the run with one statement, and the claim that wakes it answers the wait
 * (durable_resolve_waits).
 */
export function createWaitSteps(host: StepHost) {
  return {
    sleep(id: string, duration: Duration): Promise<void> {
      const ms = toBoundedMs(duration, "sleep duration");
      return sleepFor(host, id, () => ms);
    },

    sleepUntil(id: string, date: Date | string): Promise<void> {
      // A date past the latest the toolkit stores is that latest: never (docs/rules.md, rule 19).
      const at = toInstant(date, `sleepUntil "${id}": the date`);
      return sleepFor(host, id, () => at.getTime() - host.now().getTime());
    },

    waitForSignal: <T = unknown>(name: string, options?: WaitForSignalOptions<T>): Promise<T | null> =>
      waitForSignal(host, name, options),

    waitFor: <T>(id: string, options: WaitForOptions<T>): Promise<T> => waitFor(host, id, options),
  };
}

async function sleepFor(host: StepHost, id: string, wakeInMs: () => number): Promise<void> {
  const { seq, recorded, isReclaim } = host.reach(id, "sleep");
  if (host.stopping) return never();
  if (recorded) {
    // The wake time was stored at the first call; a replay never moves it. Once it has passed,
    // the receipt answers.
    if (!recorded.wakeAt || recorded.wakeAt.getTime() <= host.now().getTime()) return;
    const wakeAt = recorded.wakeAt;
    return traceWait(host, id, "sleep", isReclaim, async () => {
      if (await waitUntil(host, wakeAt, { step_id: id }, "sleep", id)) return;
      return never();
    });
  }
  return traceWait(host, id, "sleep", isReclaim, () => firstSleep(host, id, seq, wakeInMs));
}

async function firstSleep(host: StepHost, id: string, seq: number, wakeInMs: () => number): Promise<void> {
  // skipSleeps (testing only): the sleep is due now, so it is recorded completed and not waited.
  const ms = host.settings.skipSleeps ? 0 : Math.max(0, wakeInMs());
  if (!host.waitsHere(ms)) {
    const wait: Wait = { step_id: id, seq, kind: "sleep", wake_in_ms: ms };
    return host.stop({ kind: "suspend", waits: [wait], waitingFor: { kind: "sleep", name: id } });
  }
  // Short: store the wake time (as a completed receipt that still holds until then), then wait here.
  const written = await host.track(() =>
    host.write({ stepId: id, seq, kind: "sleep", status: "completed", attempt: 1, wakeInMs: ms }),
  );
  if (!written) return never();
  await host.track(() => pause(ms, host.signal));
  if (host.stopping) return never();
}

/**
 * Takes the oldest delivery of `name` that no earlier wait of the run took (the mailbox, rule
 * 16): from what the claim loaded, in this process; otherwise the run parks, and the claim
 * that wakes it takes the delivery in SQL (durable_resolve_waits).
 */
async function waitForSignal<T>(
  host: StepHost,
  name: string,
  options: WaitForSignalOptions<T> = {},
): Promise<T | null> {
  const timeoutMs = options.timeout === undefined ? null : toBoundedMs(options.timeout, "timeout");
  const stepId = options.id ?? name;
  if (stepId !== name) storableName(name, "a signal name");
  const { seq, recorded, isReclaim } = host.reach(stepId, "signal");
  const parse = (result: unknown): T | null => {
    const { payload, timedOut } = (result ?? {}) as { payload?: unknown; timedOut?: boolean };
    if (timedOut) return null;
    return options.schema ? options.schema.parse(payload) : (payload as T);
  };
  if (recorded?.status === "completed") return parse(await host.answer(recorded));
  if (host.stopping) return never();
  return traceWait(host, stepId, "signal", isReclaim, async () => {
    // A wait whose deadline passed is answered by the claim that wakes it, which knows whether
    // a delivery landed before the deadline (durable_resolve_waits); here we would not.
    const expired = recorded?.deadlineAt != null && host.now() >= recorded.deadlineAt;
    const delivery = expired ? undefined : host.takeDelivery(name);
    if (delivery) return parse(await takeDelivery(host, stepId, seq, name, delivery));
    const wait: Wait = recorded
      ? { step_id: stepId }
      : { step_id: stepId, seq, kind: "signal", deadline_in_ms: timeoutMs, signal_name: name };
    return host.stop<T | null>({ kind: "suspend", waits: [wait], waitingFor: { kind: "signal", name } });
  });
}

/** A delivery already in the mailbox: the receipt takes it in the same statement; the result recorded. */
async function takeDelivery(
  host: StepHost,
  stepId: string,
  seq: number,
  name: string,
  delivery: { payload: unknown; seq: number },
): Promise<StepRecord["result"]> {
  const result = { payload: delivery.payload, signalSeq: delivery.seq };
  const written = await host.track(() =>
    host.write({
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
  return written.conflict ? written.recorded.result : result;
}
