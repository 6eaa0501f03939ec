import Link from "next/link";
import type { RunStatus } from "@/lib/durable";
import type { DemoInfo } from "../workflows/catalog";
import { Deadline } from "./deadline";
import type { Outcome } from "./outcome";
import { OutcomeBadge } from "./outcome-badge";
import { runHref } from "./run-family";
import { RunTags } from "./runs-table";
import { StatusBadge } from "./status-badge";

/**
 * The run page's head: the workflow and version, the id, where it was forked from, the runs it continues and
 * continued as (ctx.continueAsNew), its status and deadline.
 */
export function RunHead({
  run,
  title,
  demo,
  outcome,
  clock,
  terminal,
}: {
  run: RunStatus;
  title: string;
  demo: DemoInfo | null;
  outcome: Outcome | null;
  clock: number;
  terminal: boolean;
}) {
  return (
    <header className="run-head">
      <div>
        <p className="eyebrow">
          {title} · <code>{run.workflow}</code>
          {run.version ? (
            <span data-testid="run-version">
              {" "}
              · version <code>{run.version}</code>
            </span>
          ) : null}
        </p>
        <h1 className="run-id">{run.id}</h1>
        {run.forkedFrom ? (
          <p className="forked-from" data-testid="forked-from">
            Forked from <Link href={runHref(run.forkedFrom.runId)}>{run.forkedFrom.runId}</Link> at step{" "}
            <code>{run.forkedFrom.stepId}</code>: the steps before it replay the source&apos;s receipts.
          </p>
        ) : null}
        {run.continuedFrom ? (
          <p className="continued-from" data-testid="continued-from">
            ← Continued from <Link href={runHref(run.continuedFrom)}>{run.continuedFrom}</Link>
          </p>
        ) : null}
        {run.continuedAs ? (
          <p className="continued-as" data-testid="continued-as">
            Continued as <Link href={runHref(run.continuedAs)}>{run.continuedAs}</Link> →: a fresh ledger
            (ctx.continueAsNew)
          </p>
        ) : null}
        <RunTags tags={run.tags ?? []} />
        {demo ? <p className="lede">{demo.summary}</p> : null}
      </div>
      <div className="run-state">
        <div className="run-badges">
          <StatusBadge status={run.status} large />
          {outcome ? <OutcomeBadge outcome={outcome} large /> : null}
        </div>
        {outcome?.detail ? (
          <p className="run-outcome-detail" data-testid="outcome-detail">
            {outcome.detail}
          </p>
        ) : null}
        <Deadline run={run} now={clock} terminal={terminal} />
      </div>
    </header>
  );
}
