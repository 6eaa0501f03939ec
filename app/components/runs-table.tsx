import Link from "next/link";
import type { RunSummary } from "@/lib/durable";
import { workflowTitles } from "../workflows/catalog";
import { formatRelative, formatTimestamp } from "./format";
import type { Outcome } from "./outcome";
import { OutcomeBadge } from "./outcome-badge";
import { StatusBadge } from "./status-badge";

/**
 * The runs list: a table on a wide screen; under 640 px each row is a card, its cells stacked
 * with their column's name (`data-label`, shown by app/globals.css). A completed run shows its
 * outcome under its status (`outcomes`, by run id: app/runs/outcomes.ts); a child run links to its
 * parent (docs/guide/dashboard.md, "Composition on the run page"). With `selectable`, each row has a
 * box (`select`, its run id) for the bulk form around the table (app/components/bulk-form.tsx).
 */
export function RunsTable({
  runs,
  outcomes = {},
  now,
  selectable = false,
}: {
  runs: RunSummary[];
  outcomes?: Record<string, Outcome>;
  now: number;
  selectable?: boolean;
}) {
  return (
    <div className="table-wrap">
      <table className={selectable ? "runs-table stack-table selectable" : "runs-table stack-table"}>
        <thead>
          <tr>
            {selectable ? <th className="cell-select" aria-label="Select" /> : null}
            <th>Run</th>
            <th>Status</th>
            <th>Waiting for</th>
            <th className="num">Claims</th>
            <th>Started</th>
            <th>Updated</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <RunRow key={run.id} run={run} outcome={outcomes[run.id] ?? null} now={now} selectable={selectable} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function RunRow({
  run,
  outcome,
  now,
  selectable,
}: {
  run: RunSummary;
  outcome: Outcome | null;
  now: number;
  selectable: boolean;
}) {
  const href = `/runs/${encodeURIComponent(run.id)}`;
  return (
    <tr data-run={run.id} data-status={run.status}>
      {selectable ? (
        <td className="cell-select">
          <input type="checkbox" name="select" value={run.id} aria-label={`Select ${run.id}`} />
        </td>
      ) : null}
      <td className="cell-main">
        <Link href={href} className="run-link">
          <code>{run.id}</code>
        </Link>
        <div className="muted small">
          {workflowTitles[run.workflow] ?? run.workflow}
          {run.version === null ? null : ` · version ${run.version}`}
        </div>
        {run.parentId ? (
          <div className="muted small" data-testid="parent-link">
            child of{" "}
            <Link href={`/runs/${encodeURIComponent(run.parentId)}`}>
              <code>{run.parentId}</code>
            </Link>
          </div>
        ) : null}
        <RunTags tags={run.tags ?? []} />
      </td>
      <td data-label="Status">
        <StatusBadge status={run.status} />
        {outcome ? (
          <div className="cell-outcome">
            <OutcomeBadge outcome={outcome} />
          </div>
        ) : null}
        {run.error ? (
          <div className="error-text small" title={run.error.message}>
            {run.error.message.slice(0, 80)}
          </div>
        ) : null}
      </td>
      <td data-label="Waiting for">
        {run.waitingFor ? (
          <>
            <span className="wait-kind">{run.waitingFor.kind}</span> <code>{run.waitingFor.name}</code>
            {run.wakeAt ? (
              <div className="muted small">
                {run.waitingFor.kind === "signal" ? "times out " : ""}
                {formatRelative(run.wakeAt, now)}
              </div>
            ) : null}
          </>
        ) : (
          <span className="muted">—</span>
        )}
      </td>
      <td data-label="Claims" className="num">
        {run.attempts}
      </td>
      <td data-label="Started" title={formatTimestamp(run.createdAt)}>
        {formatRelative(run.createdAt, now)}
      </td>
      <td data-label="Updated" title={formatTimestamp(run.updatedAt)}>
        {formatRelative(run.updatedAt, now)}
      </td>
    </tr>
  );
}

/** A run's tags, each a link to the list filtered by it. */
export function RunTags({ tags }: { tags: readonly string[] }) {
  if (tags.length === 0) return null;
  return (
    <ul className="tags" data-testid="run-tags" aria-label="Tags">
      {tags.map((tag) => (
        <li key={tag}>
          <Link href={`/?tag=${encodeURIComponent(tag)}`} className="tag" data-tag={tag}>
            {tag}
          </Link>
        </li>
      ))}
    </ul>
  );
}
