// ctx.step.waitForEvent (docs/guide/events.md, "Waiting for an event"): the data of the next event
// of a name (whose data contains `match`) stored since the wait began, or since the run started;
// one receipt; null at the timeout. A new wait parks the run at once; `durable.publish` answers a
// waiting step in its statement, and a suspension that finds an event the pass did not see makes
// the run due now (durable_suspend_run), so the pass that replays the wait reads the events here.
import { toBoundedMs } from "../duration";
import type { StepHost } from "../engine/run/step-host";
import { InvalidInputError } from "../errors";
import type { WaitForEventOptions } from "../event-types";
import { checkEventMatch, jsonContains } from "../json";
import { storableName } from "../names";
import type { StepRecord, Wait } from "../store";
import { never } from "./never";
import { traceWait } from "./wait-until";

/** A receipt of an event wait: the event's data and id, or the timeout. */
type EventReceipt = { data?: unknown; eventId?: string; timedOut?: boolean } | null;

export async function waitForEvent<T>(
  host: StepHost,
  id: string,
  name: string,
  options: WaitForEventOptions = {},
): Promise<T | null> {
  const eventName = storableName(name, `waitForEvent "${id}": the event name`);
  if (options === null || typeof options !== "object") {
    throw new InvalidInputError(`waitForEvent "${id}": options is an object`);
  }
  const match = checkEventMatch(options.match, `waitForEvent "${id}": match`);
  const timeoutMs =
    options.timeout === undefined ? null : toBoundedMs(options.timeout, `waitForEvent "${id}": timeout`);
  if (options.since !== undefined && options.since !== "wait" && options.since !== "run") {
    throw new InvalidInputError(`waitForEvent "${id}": since is "wait" or "run"`);
  }
  const { seq, recorded, isReclaim } = host.reach(id, "event");
  if (recorded?.status === "completed") return dataOf<T>(await host.answer(recorded));
  if (host.stopping) return never();
  return traceWait(host, id, "event", isReclaim, async () => {
    if (!recorded?.eventWait) {
      // "run": the suspension writes the run's created_at (exact, on the database clock).
      const since = options.since === "run" ? "run" : host.claimTime;
      const wait: Wait = {
        step_id: id,
        seq,
        kind: "event",
        signal_name: eventName,
        deadline_in_ms: timeoutMs,
        event_wait: { ...(match === undefined ? {} : { match }), since },
        seen_events: [],
      };
      return host.stop<T | null>({ kind: "suspend", waits: [wait], waitingFor: { kind: "event", name: eventName } });
    }
    return dataOf<T>(await replay(host, id, seq, recorded, recorded.eventWait));
  });
}

/** A waiting event step reached again: the first event it may take, its timeout, or a new suspension. */
async function replay(
  host: StepHost,
  id: string,
  seq: number,
  recorded: StepRecord,
  wait: NonNullable<StepRecord["eventWait"]>,
): Promise<EventReceipt> {
  const { deadlineAt } = recorded;
  const events = await host.track(() => host.readEvents(wait.name, wait.since, deadlineAt));
  const taken = events.find((event) => wait.match === undefined || jsonContains(event.data, wait.match));
  const expired = deadlineAt !== null && host.now() >= deadlineAt;
  if (taken || expired) {
    const result: EventReceipt = taken ? { data: taken.data, eventId: taken.id } : { timedOut: true };
    const written = await host.track(() =>
      host.write({
        stepId: id,
        seq,
        kind: "event",
        status: "completed",
        attempt: 1,
        resultJson: JSON.stringify(result),
      }),
    );
    if (!written) return never();
    return written.conflict ? ((await host.answer(written.recorded)) as EventReceipt) : result;
  }
  const again: Wait = { step_id: id, seen_events: events.map((event) => event.id) };
  return host.stop({ kind: "suspend", waits: [again], waitingFor: { kind: "event", name: wait.name } });
}

function dataOf<T>(receipt: unknown): T | null {
  const { data, timedOut } = (receipt ?? {}) as NonNullable<EventReceipt>;
  return timedOut ? null : (data as T);
}
