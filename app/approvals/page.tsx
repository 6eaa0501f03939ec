import Link from "next/link";
import { type ApprovalPage, type Durable, InvalidInputError, type PendingApproval } from "@/lib/durable";
import { DashboardClosed } from "../components/dashboard-closed";
import { DecisionForm } from "../components/decision-form";
import { formatDuration } from "../components/format";
import { JsonOutput } from "../components/json-output";
import { dashboardAccess } from "../dashboard-access";
import { getDurable } from "../durable";

export const dynamic = "force-dynamic";
// A decision that completes a wait advances the run after answering: the routes' time.
export const maxDuration = 60;

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };
type InboxFilters = { tag?: string; workflow?: string };

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value) || undefined;

/** This inbox's URL for a filter and a cursor: only the fields given. */
function inboxHref(filters: InboxFilters, cursor?: string): string {
  const query = new URLSearchParams();
  if (filters.workflow) query.set("workflow", filters.workflow);
  if (filters.tag) query.set("tag", filters.tag);
  if (cursor) query.set("cursor", cursor);
  const text = query.toString();
  return text ? `/approvals?${text}` : "/approvals";
}

/** A page of the inbox; a filter the API refuses is said, not thrown. */
async function readInbox(
  durable: Durable,
  filters: { tag?: string; workflow?: string },
  cursor: string | undefined,
): Promise<ApprovalPage | string> {
  try {
    return await durable.approvals({ ...filters, limit: 25, ...(cursor ? { cursor } : {}) });
  } catch (e) {
    if (InvalidInputError.is(e)) return e.message;
    throw e;
  }
}

/**
 * The inbox (docs/guide/dashboard.md, "Approvals"): every wait a person decides, across runs, with
 * its run, input, age and the decisions so far, each with Approve and Reject.
 */
export default async function Approvals({ searchParams }: Props) {
  const params = await searchParams;
  const filters = { tag: first(params.tag), workflow: first(params.workflow) };
  const access = await dashboardAccess();
  if (access !== "open") return <DashboardClosed access={access} next={inboxHref(filters)} />;
  const durable = await getDurable();
  const page = await readInbox(durable, filters, first(params.cursor));
  return (
    <section className="panel" data-testid="approvals">
      <div className="runs-head">
        <h1>Approvals</h1>
        <p className="muted small">The waits a person decides, newest run first.</p>
      </div>
      <form method="get" action="/approvals" className="run-filters" aria-label="Filter approvals">
        <label className="field">
          <span>Workflow</span>
          <input name="workflow" defaultValue={filters.workflow ?? ""} className="text-input" maxLength={255} />
        </label>
        <label className="field">
          <span>Tag</span>
          <input name="tag" defaultValue={filters.tag ?? ""} className="text-input" maxLength={64} />
        </label>
        <div className="field-buttons">
          <button type="submit" className="button">
            Filter
          </button>
        </div>
      </form>
      {typeof page === "string" ? (
        <p className="error-text" role="alert">
          {page}
        </p>
      ) : page.approvals.length === 0 ? (
        <p className="empty" data-testid="approvals-empty">
          Nothing waits for a decision.
        </p>
      ) : (
        <ul className="approval-list">
          {page.approvals.map((item) => (
            <ApprovalItem key={`${item.runId}/${item.stepId}/${item.toolCallId ?? ""}`} item={item} filters={filters} />
          ))}
        </ul>
      )}
      {typeof page !== "string" && page.nextCursor ? (
        <p className="pager">
          <Link href={inboxHref(filters, page.nextCursor)}>Older →</Link>
        </p>
      ) : null}
    </section>
  );
}

/**
 * One wait in the inbox: its run, workflow, age, tags, input, the decisions so far and the form; an
 * agent's tool call shows its tool and its arguments (docs/guide/approvals.md, "Tool approvals").
 */
function ApprovalItem({ item, filters }: { item: PendingApproval; filters: InboxFilters }) {
  return (
    <li className="approval" data-approval={item.runId} data-kind={item.kind} data-tool-call={item.toolCallId}>
      <div className="approval-head">
        <Link href={`/runs/${encodeURIComponent(item.runId)}`} className="run-link run-id">
          {item.runId}
        </Link>
        <span className="muted small">
          {item.workflow} · {item.kind === "tool" ? `tool ${item.toolName}` : item.name} · waiting{" "}
          {formatDuration(item.ageMs)}
        </span>
        {item.kind === "signal" ? (
          <span className="badge badge-waiting" data-testid="approval-count">
            {item.decisions.filter((d) => d.approved).length} of {item.quorum}
          </span>
        ) : null}
      </div>
      {item.tags.length > 0 ? (
        <p className="tags">
          {item.tags.map((tag) => (
            <Link key={tag} href={inboxHref({ ...filters, tag })} className="tag" data-tag={tag}>
              {tag}
            </Link>
          ))}
        </p>
      ) : null}
      <JsonOutput value={item.input} testId="approval-input" />
      {item.decisions.length > 0 ? (
        <ul className="small approval-decisions">
          {item.decisions.map((d) => (
            <li key={d.actor} data-actor={d.actor}>
              {d.approved ? "Approved" : "Rejected"} by {d.actor}
              {d.reason ? `: ${d.reason}` : ""}
            </li>
          ))}
        </ul>
      ) : null}
      <DecisionForm runId={item.runId} name={item.name} toolCallId={item.toolCallId} turnId={item.turnId} />
    </li>
  );
}
