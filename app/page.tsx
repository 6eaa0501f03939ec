import Link from "next/link";
import type { ReactNode } from "react";
import { type Durable, InvalidInputError, type RunStatus } from "@/lib/durable";
import { startDemo } from "./actions";
import { AutoRefresh } from "./components/auto-refresh";
import { BulkForm } from "./components/bulk-form";
import { DashboardClosed } from "./components/dashboard-closed";
import { type ListFilters, listHref, RunFilters } from "./components/run-filters";
import { RunsTable } from "./components/runs-table";
import { SchedulesCard } from "./components/schedules-card";
import { SubmitButton } from "./components/submit-button";
import { dashboardAccess, signedInWithCookie } from "./dashboard-access";
import { signOut } from "./dashboard-actions";
import { getDurable } from "./durable";
import { countLabel, countRuns } from "./runs/counts";
import { readOutcomes } from "./runs/outcomes";
import { demos } from "./workflows/catalog";

export const dynamic = "force-dynamic";
// startDemo advances the new run after answering: give it the same time as the routes.
export const maxDuration = 60;

type RunStatusValue = RunStatus["status"];

const FILTERS = ["all", "waiting", "running", "pending", "completed", "failed", "cancelled"] as const;
type Filter = (typeof FILTERS)[number];

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value) || undefined;

/** The title and the public demo: all that a request that may not operate the dashboard sees. */
function Hero({ children }: { children?: ReactNode }) {
  return (
    <header className="hero">
      <h1>Durable runs</h1>
      <p className="lede">
        Multi-step work that survives being killed halfway, on nothing but Postgres and ordinary route handlers. Start a
        demo, then watch its steps: every completed step leaves a receipt, and a replay answers from it.
      </p>
      <p>
        <Link href="/chat/new" className="button" data-testid="chat-demo-link">
          Open the support chat →
        </Link>{" "}
        <span className="small muted">an agent with tools, each answer a run: reload, stop, approve a refund</span>
      </p>
      {children}
    </header>
  );
}

/** A page of runs for these filters; a filter the API refuses is said, not thrown. */
async function readPage(durable: Durable, filters: ListFilters, cursor: string | undefined) {
  const query = {
    status: filters.status as RunStatusValue | undefined,
    workflow: filters.workflow,
    tag: filters.tag,
    version: filters.version,
    parentId: filters.parent,
    beforePatch: filters.beforePatch,
    limit: 25,
  };
  try {
    return { page: await durable.list({ ...query, ...(cursor ? { cursor } : {}) }), refused: null };
  } catch (e) {
    if (!InvalidInputError.is(e)) throw e;
    if (!cursor) return { page: { runs: [], nextCursor: null }, refused: e.message };
    // A cursor this API did not hand out: the first page.
    return readPage(durable, filters, undefined);
  }
}

/** The status filter and the list's filters the query string asks for. */
function filtersOf(params: Awaited<Props["searchParams"]>): { filter: Filter; filters: ListFilters } {
  const filter: Filter = FILTERS.find((f) => f === first(params.status)) ?? "all";
  const filters: ListFilters = {
    status: filter === "all" ? undefined : filter,
    workflow: first(params.workflow),
    tag: first(params.tag),
    version: first(params.version),
    parent: first(params.parent),
    beforePatch: first(params.beforePatch),
  };
  return { filter, filters };
}

export default async function Home({ searchParams }: Props) {
  const params = await searchParams;
  const { filter, filters } = filtersOf(params);
  const cursor = first(params.cursor);
  const access = await dashboardAccess();
  if (access !== "open") {
    return (
      <>
        <Hero />
        <DashboardClosed access={access} next={listHref(filters)} />
      </>
    );
  }
  const durable = await getDurable();
  const [counts, schedules, { page, refused }, signedIn] = await Promise.all([
    countRuns(durable.db),
    durable.schedules(),
    readPage(durable, filters, cursor),
    signedInWithCookie(),
  ]);
  const outcomes = await readOutcomes(durable, page.runs);
  const now = Date.now();
  const narrowed = Boolean(filters.workflow || filters.tag || filters.version || filters.parent || filters.beforePatch);
  const workflowNames = [...durable.workflows.keys()].sort();

  return (
    <>
      <Hero>
        {signedIn ? (
          <form action={signOut} className="signed-in small muted">
            Signed in with the admin secret.{" "}
            <button type="submit" className="link-button">
              Sign out
            </button>
          </form>
        ) : null}
      </Hero>

      <DemoCards />

      <section aria-labelledby="runs-title" className="runs-section">
        <div className="runs-head">
          <h2 id="runs-title" className="section-title">
            Runs
          </h2>
          <StatusFilters filters={filters} filter={filter} counts={counts} />
        </div>
        <RunFilters filters={filters} workflows={workflowNames} />
        <RunsList
          page={page}
          refused={refused}
          outcomes={outcomes}
          now={now}
          empty={
            counts.all === 0
              ? "No runs yet. Start a demo above."
              : narrowed
                ? "No runs match these filters."
                : `No ${filter} runs.`
          }
        />
        <div className="pager">
          {cursor ? <Link href={listHref(filters)}>← Newest</Link> : <span />}
          {page.nextCursor ? (
            <Link href={listHref(filters, page.nextCursor)} data-testid="older">
              Older →
            </Link>
          ) : null}
        </div>
      </section>
      <SchedulesCard schedules={schedules} now={now} />
      <AutoRefresh active={counts.pending + counts.running + counts.waiting > 0} />
    </>
  );
}

/** A card per demo, each a form that starts its run. */
function DemoCards() {
  return (
    <section aria-labelledby="demos-title">
      <h2 id="demos-title" className="section-title">
        Start a demo
      </h2>
      <div className="demo-grid">
        {demos.map((demo) => (
          <form
            key={demo.workflow}
            action={startDemo.bind(null, demo.workflow)}
            className="demo-card"
            data-demo={demo.workflow}
          >
            <h3>{demo.title}</h3>
            <code className="demo-id">{demo.workflow}</code>
            <p>{demo.summary}</p>
            <ul className="checks">
              {demo.shows.slice(0, 2).map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
            <SubmitButton className="button button-primary" pendingLabel="Starting…">
              {demo.cta}
            </SubmitButton>
          </form>
        ))}
      </div>
    </section>
  );
}

/** The status filters, each with its count, keeping the other filters. */
function StatusFilters({
  filters,
  filter,
  counts,
}: {
  filters: ListFilters;
  filter: Filter;
  counts: Awaited<ReturnType<typeof countRuns>>;
}) {
  return (
    <nav className="filters" aria-label="Filter by status">
      {FILTERS.map((f) => (
        <Link
          key={f}
          href={listHref({ ...filters, status: f === "all" ? undefined : f })}
          className={f === filter ? "filter filter-active" : "filter"}
          aria-current={f === filter ? "page" : undefined}
        >
          {f === "all" ? "All" : f[0]!.toUpperCase() + f.slice(1)}{" "}
          <span className="filter-count">{countLabel(counts, f)}</span>
        </Link>
      ))}
    </nav>
  );
}

/** The page of runs under bulk actions, or why there is none. */
function RunsList({
  page,
  refused,
  outcomes,
  now,
  empty,
}: {
  page: Awaited<ReturnType<typeof readPage>>["page"];
  refused: string | null;
  outcomes: Awaited<ReturnType<typeof readOutcomes>>;
  now: number;
  empty: string;
}) {
  if (refused) {
    return (
      <p className="panel action-error" role="alert" data-testid="filter-refused">
        The filter was refused: {refused}
      </p>
    );
  }
  if (page.runs.length === 0) return <div className="panel empty">{empty}</div>;
  return (
    <BulkForm>
      <RunsTable runs={page.runs} outcomes={outcomes} now={now} selectable />
    </BulkForm>
  );
}
