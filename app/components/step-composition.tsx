import Link from "next/link";
import type { ReactNode } from "react";
import type { RunStatus } from "@/lib/durable";
import { formatRelative, formatTimestamp } from "./format";
import { runHref } from "./run-family";
import { StatusBadge } from "./status-badge";

type RunStatusValue = RunStatus["status"];

type Step = RunStatus["steps"][number];
type Branch = NonNullable<Step["branches"]>[number];

/** What the page knows beside the run's own status: its children's statuses, its callbacks' step ids. */
export interface CompositionFacts {
  /** Child run id → its status, as the server last read it (`durable.list({ parentId })`). */
  childStatus: Record<string, RunStatusValue>;
  /** Callback id → the step that made it (`durable.callbacks(runId)`), to name a race's callback branch. */
  callbackSteps: Record<string, string>;
}

export const NO_COMPOSITION: CompositionFacts = { childStatus: {}, callbackSteps: {} };

/**
 * A composition step's facts on the timeline (docs/guide/dashboard.md, "Composition on the run
 * page"): the child run of an `invoke` or `start` with its status, a race's branches with the
 * winner marked, and a wait's deadline, counting down while `now` ticks.
 */
export function StepComposition({ step, now, facts }: { step: Step; now: number | null; facts: CompositionFacts }) {
  const child = step.childId;
  const race = step.kind === "any" && step.branches ? step.branches : null;
  const waiting = step.status === "waiting";
  if (!child && !race && !(step.deadlineAt && waiting)) return null;
  return (
    <div className="step-composition">
      {child ? (
        <div className="step-child" data-testid="step-child" data-child={child}>
          child run{" "}
          <Link href={runHref(child)}>
            <code>{child}</code>
          </Link>{" "}
          {facts.childStatus[child] ? <StatusBadge status={facts.childStatus[child]} /> : null}
        </div>
      ) : null}
      {race ? (
        <ul className="race-branches" data-testid="race-branches">
          {race.map((branch) => (
            <RaceBranch
              key={branch.name}
              branch={branch}
              won={step.winner === branch.name}
              decided={step.winner != null}
              now={waiting ? now : null}
              facts={facts}
            />
          ))}
        </ul>
      ) : null}
      {step.deadlineAt && waiting ? (
        <div className="small muted" data-testid="step-deadline" suppressHydrationWarning>
          times out {now === null ? `at ${formatTimestamp(step.deadlineAt)}` : formatRelative(step.deadlineAt, now)}
        </div>
      ) : null}
    </div>
  );
}

function RaceBranch(props: {
  branch: Branch;
  won: boolean;
  decided: boolean;
  now: number | null;
  facts: CompositionFacts;
}) {
  const { branch, won, decided, now, facts } = props;
  const state = won ? "won" : decided ? "lost" : "open";
  return (
    <li className={`race-branch race-${state}`} data-branch={branch.name} data-branch-state={state}>
      <strong>{branch.name}</strong> <span className="wait-kind">{branch.kind}</span> {branchTarget(branch, now, facts)}
      {won ? <span className="race-winner">won</span> : null}
    </li>
  );
}

/** A branch's target in words: the signal, the run (a link), the sleep's wake time, the callback's step. */
function branchTarget(branch: Branch, now: number | null, facts: CompositionFacts): ReactNode {
  if (branch.kind === "run") {
    return (
      <Link href={runHref(branch.target)}>
        <code>{branch.target}</code>
      </Link>
    );
  }
  if (branch.kind === "sleep") {
    return (
      <span suppressHydrationWarning>
        {now === null ? `until ${formatTimestamp(branch.target)}` : `wakes ${formatRelative(branch.target, now)}`}
      </span>
    );
  }
  if (branch.kind === "callback") return <code>{facts.callbackSteps[branch.target] ?? "a callback URL"}</code>;
  return <code>{branch.target}</code>;
}
