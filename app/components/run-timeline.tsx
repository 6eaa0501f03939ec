import type { RunEvent, RunStatus } from "@/lib/durable";
import { ForkButton } from "./fork-button";
import { formatCount, formatDuration, formatTimestamp, STEP_KIND_LABELS, tokensOf } from "./format";
import { StatusBadge } from "./status-badge";
import { type CompositionFacts, NO_COMPOSITION, StepComposition } from "./step-composition";

type Step = RunStatus["steps"][number];

/** A run event as the server hands it to the page (`durable.events(runId)`), its time as an ISO string. */
export type TimelineEvent = Omit<RunEvent, "at"> & { at: string };

/** The most events the run page reads (one `durable.events` page); a run with more shows the first ones. */
export const TIMELINE_EVENT_LIMIT = 1000;

export const toTimelineEvents = (events: RunEvent[]): TimelineEvent[] =>
  events.map((event) => ({ ...event, at: event.at.toISOString() }));

type Entry = { step: Step; index: number } | { event: TimelineEvent };

/**
 * The steps in their order, each event placed before the first step that started after it: a
 * yield or a heal shows just before the step that ran next, a late write after the step it concerns.
 */
function interleave(steps: Step[], events: TimelineEvent[]): Entry[] {
  const entries: Entry[] = [];
  let next = 0;
  steps.forEach((step, index) => {
    if (step.startedAt !== null) {
      const started = Date.parse(step.startedAt);
      while (next < events.length && Date.parse(events[next]!.at) < started) entries.push({ event: events[next++]! });
    }
    entries.push({ step, index });
  });
  for (; next < events.length; next++) entries.push({ event: events[next]! });
  return entries;
}

/**
 * Every step the run has reached, in order (status, attempt, timings, external key, error), with
 * the run's events (heals, budget yields, refused writes, conflicts, cancels, retries) between them.
 */
export function RunTimeline({
  run,
  now,
  events = [],
  facts = NO_COMPOSITION,
  forkable = false,
}: {
  run: RunStatus;
  now: number | null;
  /** `durable.events(run.id)`, oldest first, as the server last read them. */
  events?: TimelineEvent[];
  /** The children's statuses and the callbacks' steps, for the composition steps. */
  facts?: CompositionFacts;
  /** "Fork from here" on each completed and failed step (the dashboard's; docs/guide/runs.md, "Forking a run"). */
  forkable?: boolean;
}) {
  const origin = Date.parse(run.createdAt);
  // Steps whose receipt a fork edited (docs/guide/edit-and-resume.md), with the reason given.
  const edited = new Map(
    events.filter((event) => event.kind === "step.edited" && event.stepId).map((e) => [e.stepId!, text(e.data.reason)]),
  );
  if (run.steps.length === 0 && events.length === 0) {
    return (
      <p className="muted timeline-empty">No steps yet{run.attempts === 0 ? ": the run has not been claimed" : ""}.</p>
    );
  }
  return (
    <>
      {run.steps.length === 0 ? <p className="muted timeline-empty timeline-lead">No steps yet.</p> : null}
      <ol className="timeline" data-testid="timeline">
        {interleave(run.steps, events).map((entry) =>
          "event" in entry ? (
            <TimelineEventItem key={`event-${entry.event.id}`} event={entry.event} origin={origin} />
          ) : (
            <TimelineStep
              key={entry.step.id}
              step={entry.step}
              previous={run.steps[entry.index - 1]}
              index={entry.index}
              origin={origin}
              now={now}
              facts={facts}
              forkRunId={forkable ? run.id : null}
              edited={edited.has(entry.step.id) ? { reason: edited.get(entry.step.id) ?? null } : null}
            />
          ),
        )}
        {run.status === "completed" || run.status === "failed" || run.status === "cancelled" ? (
          <li className={`timeline-step timeline-end step-${run.status}`}>
            <span className="timeline-dot" aria-hidden />
            <div className="timeline-body">
              <div className="timeline-title">
                <strong>Run {run.status}</strong>
                <span className="timeline-offset">+{formatDuration(Date.parse(run.updatedAt) - origin)}</span>
              </div>
            </div>
          </li>
        ) : null}
      </ol>
      {events.length >= TIMELINE_EVENT_LIMIT ? (
        <p className="small muted">
          The first {formatCount(TIMELINE_EVENT_LIMIT)} events are shown;{" "}
          <code>durable.events(runId, {"{ after }"})</code> pages the rest.
        </p>
      ) : null}
    </>
  );
}

const WAITS = new Set(["sleep", "signal", "poll", "invoke", "any"]);

function TimelineStep({
  step,
  previous,
  index,
  origin,
  now,
  facts,
  forkRunId,
  edited = null,
}: {
  step: Step;
  previous: Step | undefined;
  index: number;
  origin: number;
  now: number | null;
  facts: CompositionFacts;
  /** The run to fork from this step, when the page offers it. */
  forkRunId: string | null;
  /** A fork's edited receipt (`step.edited`), with its reason. */
  edited?: { reason: string | null } | null;
}) {
  const { started, finished, took } = timingOf(step, previous, now);
  return (
    <li className={`timeline-step step-${step.status}`} data-step={step.id} data-step-status={step.status}>
      <span className="timeline-dot" aria-hidden>
        {index + 1}
      </span>
      <div className="timeline-body">
        <div className="timeline-title">
          <code className="step-id">{step.id}</code>
          <span className="kind">{STEP_KIND_LABELS[step.kind] ?? step.kind}</span>
          {edited ? (
            <span className="attempt attempt-retried" data-edited title={edited.reason ?? "no reason given"}>
              edited
            </span>
          ) : null}
          {step.attempt > 1 ? (
            <span className="attempt attempt-retried">attempt {step.attempt}</span>
          ) : (
            <span className="attempt">attempt 1</span>
          )}
          <StatusBadge status={step.status} />
        </div>
        <StepMeta step={step} started={started} finished={finished} took={took} origin={origin} />
        <StepComposition step={step} now={now} facts={facts} />
        {step.externalKey ? (
          <div
            className="timeline-key"
            title="Stable across retries and replays: pass it to the provider as the idempotency key"
          >
            external key <code>{step.externalKey}</code>
          </div>
        ) : null}
        {step.error ? (
          <div className="timeline-error">
            <code>{step.error.code}</code> {step.error.message}
          </div>
        ) : null}
        {forkRunId !== null && (step.status === "completed" || step.status === "failed") ? (
          <ForkButton runId={forkRunId} stepId={step.id} />
        ) : null}
      </div>
    </li>
  );
}

/** When the step started and ended (ms), and how long it took or has taken so far. */
function timingOf(step: Step, previous: Step | undefined, now: number | null) {
  const finished = step.completedAt ? Date.parse(step.completedAt) : null;
  let started = step.startedAt ? Date.parse(step.startedAt) : null;
  // A wait answered in process is recorded once, when it ends: it began when the step before it ended.
  if (WAITS.has(step.kind) && started !== null && started === finished && previous?.completedAt) {
    started = Math.min(started, Date.parse(previous.completedAt));
  }
  const took =
    started !== null && finished !== null
      ? finished - started
      : started !== null && now !== null
        ? Math.max(0, now - started)
        : null;
  return { started, finished, took };
}

/** The step's timing line: when it started, how long it took or waited, the tokens of a model call. */
function StepMeta({
  step,
  started,
  finished,
  took,
  origin,
}: {
  step: Step;
  started: number | null;
  finished: number | null;
  took: number | null;
  origin: number;
}) {
  return (
    <div className="timeline-meta">
      {started !== null ? <span>started +{formatDuration(started - origin)}</span> : null}
      {took !== null ? (
        <span>
          {finished === null
            ? step.status === "running"
              ? "running for"
              : "waiting for"
            : WAITS.has(step.kind)
              ? "waited"
              : "took"}{" "}
          {formatDuration(took)}
        </span>
      ) : null}
      {step.kind === "ai" && step.usage ? (
        <span className="timeline-usage" data-testid="step-usage">
          {formatCount(tokensOf(step.usage).total)} tokens{step.modelId ? ` · ${step.modelId}` : ""}
        </span>
      ) : null}
    </div>
  );
}

/** What a write refused by the fence was (data.write of a `fence.rejected` event). */
const REFUSED_WRITES: Record<string, string> = {
  finish: "finish the run",
  release: "give the run back",
  suspend: "park the run",
  stream: "append to the run's stream",
  tx: "commit its transaction",
};

type Tone = "heal" | "yield" | "refused" | "cancel" | "retry";

const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

/** "12:03:04 UTC" from a timestamp in any offset Postgres wrote it in; the raw value when it is not one. */
function clockOf(value: unknown): string {
  const raw = text(value);
  if (raw === null) return "an unknown time";
  const ms = Date.parse(raw);
  return Number.isNaN(ms) ? raw : `${formatTimestamp(new Date(ms).toISOString()).slice(11)}`;
}

/** An event in plain words: a title, what happened, and how it looks. */
export function describeEvent(event: TimelineEvent): { title: string; detail: string; tone: Tone } {
  const { data, stepId } = event;
  const step = stepId === null ? "" : ` "${stepId}"`;
  switch (event.kind) {
    case "heal": {
      const by =
        data.by === "claim"
          ? "a claim took the run over"
          : data.by === "read"
            ? "a status read gave it back, due at once"
            : "the run was given back";
      return {
        title: "Healed",
        detail:
          `the lease ran out at ${clockOf(data.leaseExpiredAt)} and ${by}: ` +
          "a step the lost owner started but did not record runs again",
        tone: "heal",
      };
    }
    case "budget.yield":
      return {
        title: "Given back",
        detail: stepId
          ? `the budget could not fit step${step}: the run is due again at once, for the next invocation`
          : "the invocation's budget ran out: the run is due again at once",
        tone: "yield",
      };
    case "fence.rejected": {
      const write = text(data.write);
      const late = text(data.late);
      const what =
        write !== null && write !== "tx"
          ? `tried to ${REFUSED_WRITES[write] ?? `write (${write})`}`
          : stepId !== null
            ? `tried to record step${step} as ${late ?? "done"}${write === "tx" ? " with its transaction" : ""}`
            : "tried to write";
      return { title: "Refused a late write", detail: `an owner that had lost the run ${what}`, tone: "refused" };
    }
    case "step.outcome-conflict":
      return {
        title: `Outcome conflict on step${step}`,
        detail: `recorded ${text(data.recorded) ?? "?"}, late ${text(data.late) ?? "?"}: the recorded outcome stands`,
        tone: "refused",
      };
    case "cancel":
      return {
        title: "Cancelled",
        detail: `${text(data.reason) ?? "no reason given"}${text(data.from) ? ` (it was ${text(data.from)})` : ""}`,
        tone: "cancel",
      };
    case "retry":
      return { title: "Retried", detail: "failed steps run again; completed steps keep their receipts", tone: "retry" };
    case "fork":
    case "step.edited":
      return describeForkEvent(event);
    case "version.unknown":
      return {
        title: `Unknown version ${text(data.version) ?? "(none)"}`,
        detail: "this deployment does not register the version the run started on: the run failed",
        tone: "refused",
      };
    default:
      return { title: event.kind, detail: JSON.stringify(data), tone: "retry" };
  }
}

/** A fork's events: the fork itself (receipts copied, edits), and each step whose receipt it edited. */
function describeForkEvent({ kind, data, stepId }: TimelineEvent): { title: string; detail: string; tone: Tone } {
  if (kind === "step.edited") {
    return {
      title: `Edited step "${stepId ?? "?"}"`,
      detail: `its receipt carries a value given at the fork of run ${text(data.from) ?? "?"}: ${
        text(data.reason) ?? "no reason given"
      }`,
      tone: "retry",
    };
  }
  const copied = typeof data.copied === "number" ? data.copied : null;
  const receipts = copied === null ? "its receipts" : `${copied} receipt${copied === 1 ? "" : "s"}`;
  const edited = typeof data.edited === "number" && data.edited > 0 ? `; ${data.edited} edited` : "";
  return {
    title: "Forked",
    detail:
      `from run ${text(data.from) ?? "?"} at step "${text(data.fromStep) ?? "?"}": ` +
      `${receipts} copied, replayed rather than run again${edited}`,
    tone: "retry",
  };
}

const EVENT_MARKS: Record<Tone, string> = { heal: "↻", yield: "⏎", refused: "!", cancel: "■", retry: "↺" };

/** One event between the steps: what happened in plain words, when, the step it concerns, the fence. */
function TimelineEventItem({ event, origin }: { event: TimelineEvent; origin: number }) {
  const { title, detail, tone } = describeEvent(event);
  return (
    <li
      className={`timeline-step timeline-event event-${tone}`}
      data-event-kind={event.kind}
      data-event-id={event.id}
      data-event-step={event.stepId ?? undefined}
    >
      <span className="timeline-dot" aria-hidden>
        {EVENT_MARKS[tone]}
      </span>
      <div className="timeline-body">
        <div className="timeline-title">
          <strong className="event-title">{title}</strong>
          <span className="timeline-offset">+{formatDuration(Math.max(0, Date.parse(event.at) - origin))}</span>
        </div>
        <p className="event-detail">{detail}</p>
        <div className="timeline-meta">
          <span>{formatTimestamp(event.at)}</span>
          {event.stepId !== null ? (
            <span className="event-step">
              step <code>{event.stepId}</code>
            </span>
          ) : null}
          {event.fence !== null ? <span>fence {event.fence}</span> : null}
        </div>
      </div>
    </li>
  );
}
