import type { RunStatus } from "@/lib/durable";
import { formatCount, formatDuration, STEP_KIND_LABELS, tokensOf } from "./format";
import { StatusBadge } from "./status-badge";

type Step = RunStatus["steps"][number];

/** Every step the run has reached, in order: status, attempt, timings, external key, error. */
export function RunTimeline({ run, now }: { run: RunStatus; now: number | null }) {
  const origin = Date.parse(run.createdAt);
  if (run.steps.length === 0) {
    return <p className="muted timeline-empty">No steps yet: the run has not been claimed.</p>;
  }
  return (
    <ol className="timeline" data-testid="timeline">
      {run.steps.map((step, index) => (
        <TimelineStep
          key={step.id}
          step={step}
          previous={run.steps[index - 1]}
          index={index}
          origin={origin}
          now={now}
        />
      ))}
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
  );
}

const WAITS = new Set(["sleep", "signal", "poll"]);

function TimelineStep({
  step,
  previous,
  index,
  origin,
  now,
}: {
  step: Step;
  previous: Step | undefined;
  index: number;
  origin: number;
  now: number | null;
}) {
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
  return (
    <li className={`timeline-step step-${step.status}`} data-step={step.id} data-step-status={step.status}>
      <span className="timeline-dot" aria-hidden>
        {index + 1}
      </span>
      <div className="timeline-body">
        <div className="timeline-title">
          <code className="step-id">{step.id}</code>
          <span className="kind">{STEP_KIND_LABELS[step.kind] ?? step.kind}</span>
          {step.attempt > 1 ? (
            <span className="attempt attempt-retried">attempt {step.attempt}</span>
          ) : (
            <span className="attempt">attempt 1</span>
          )}
          <StatusBadge status={step.status} />
        </div>
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
      </div>
    </li>
  );
}
