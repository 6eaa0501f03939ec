import Link from "next/link";
import type { RunStatus } from "@/lib/durable";
import { workflowTitles } from "../workflows/catalog";
import { StatusBadge } from "./status-badge";

type RunStatusValue = RunStatus["status"];

/** A run another run's page links to: its id, workflow and status, as the server last read them. */
export interface RunLink {
  id: string;
  workflow: string;
  status: RunStatusValue;
}

/** How many children the run page lists (one `durable.list({ parentId })` page). */
export const CHILDREN_SHOWN = 50;

export const runHref = (id: string) => `/runs/${encodeURIComponent(id)}`;

/**
 * The runs around this one (docs/guide/dashboard.md, "Composition on the run page"): the parent
 * whose `invoke` or `start` started it, and the children it started, each a link with its status.
 */
export function RunFamily({ parent, kids, more }: { parent: RunLink | null; kids: RunLink[]; more: boolean }) {
  if (!parent && kids.length === 0) return null;
  return (
    <section className="panel" data-testid="run-family">
      <h2>{parent ? "Parent run" : "Child runs"}</h2>
      {parent ? (
        <p className="family-line" data-testid="run-parent">
          Started by <FamilyLink run={parent} />
        </p>
      ) : null}
      {parent && kids.length > 0 ? <h2 className="family-subtitle">Child runs</h2> : null}
      {kids.length > 0 ? (
        <ul className="family-list" data-testid="run-children">
          {kids.map((child) => (
            <li key={child.id} data-child={child.id} data-child-status={child.status}>
              <FamilyLink run={child} />
            </li>
          ))}
        </ul>
      ) : null}
      {more ? (
        <p className="small muted">
          The first {CHILDREN_SHOWN} are shown; <code>durable.list({"{ parentId }"})</code> pages the rest.
        </p>
      ) : null}
    </section>
  );
}

function FamilyLink({ run }: { run: RunLink }) {
  return (
    <>
      <Link href={runHref(run.id)} className="run-link">
        <code>{run.id}</code>
      </Link>{" "}
      <StatusBadge status={run.status} />
      <span className="muted small family-workflow">{workflowTitles[run.workflow] ?? run.workflow}</span>
    </>
  );
}
