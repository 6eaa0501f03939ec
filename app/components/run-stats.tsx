import type { RunStatus } from "@/lib/durable";
import { formatCount, formatDuration, formatTimestamp, tokensOf } from "./format";
import { LiveState } from "./live-state";
import { progressOf } from "./progress";

/** The token usage of the run's completed model calls (steps of kind "ai"). */
function usageOf(run: RunStatus) {
  const sum = { input: 0, output: 0, total: 0, calls: 0 };
  for (const step of run.steps) {
    if (step.kind !== "ai" || !step.usage) continue;
    const tokens = tokensOf(step.usage);
    sum.input += tokens.input;
    sum.output += tokens.output;
    sum.total += tokens.total;
    sum.calls += 1;
  }
  return sum;
}

/** The run page's figures: progress, time, claims, tokens (when it called a model) and whether it updates live. */
export function RunStats({
  run,
  terminal,
  elapsed,
  clientRunning,
  error,
}: {
  run: RunStatus;
  terminal: boolean;
  elapsed: number;
  clientRunning: boolean;
  error: string | null;
}) {
  const progress = progressOf(run);
  const models = run.steps.some((s) => s.kind === "ai");
  const usage = usageOf(run);
  return (
    <section className={models ? "stats stats-5" : "stats"}>
      <div className="stat">
        <span className="stat-label">Progress</span>
        <span className="stat-value" data-testid="progress">
          {progress.label}
        </span>
        <span className="progress" aria-hidden>
          <span className={`progress-bar progress-${run.status}`} style={{ width: `${progress.percent}%` }} />
        </span>
      </div>
      <div className="stat">
        <span className="stat-label">{terminal ? "Took" : "Elapsed"}</span>
        <span className="stat-value" suppressHydrationWarning>
          {formatDuration(Math.max(0, elapsed))}
        </span>
        <span className="stat-note">started {formatTimestamp(run.createdAt)}</span>
      </div>
      <div className="stat">
        <span className="stat-label">Claims</span>
        <span className="stat-value">{run.attempts}</span>
        <span className="stat-note">invocations that advanced it</span>
      </div>
      {models ? (
        <div className="stat">
          <span className="stat-label">Tokens</span>
          <span className="stat-value" data-testid="token-usage">
            {formatCount(usage.total)}
          </span>
          <span className="stat-note">
            {formatCount(usage.input)} in · {formatCount(usage.output)} out · {usage.calls} model call
            {usage.calls === 1 ? "" : "s"}
          </span>
        </div>
      ) : null}
      <div className="stat">
        <span className="stat-label">Updates</span>
        <LiveState terminal={terminal} clientRunning={clientRunning} error={error} />
      </div>
    </section>
  );
}
