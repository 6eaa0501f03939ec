import Link from "next/link";
import { InvalidInputError, type ListPage } from "@/lib/durable";
import { startDemo } from "./actions";
import { AutoRefresh } from "./components/auto-refresh";
import { DashboardOff, dashboardEnabled } from "./components/dashboard-access";
import { RunsTable } from "./components/runs-table";
import { SchedulesCard } from "./components/schedules-card";
import { SubmitButton } from "./components/submit-button";
import { getDurable } from "./durable";
import { countLabel, countRuns } from "./runs/counts";
import { readOutcomes } from "./runs/outcomes";
import { demos } from "./workflows/catalog";

export const dynamic = "force-dynamic";
// startDemo advances the new run after answering: give it the same time as the routes.
export const maxDuration = 60;

const FILTERS = ["all", "waiting", "running", "pending", "completed", "failed", "cancelled"] as const;
type Filter = (typeof FILTERS)[number];

type Props = { searchParams: Promise<{ status?: string; cursor?: string }> };

export default async function Home({ searchParams }: Props) {
  if (!dashboardEnabled()) return <DashboardOff />;
  const params = await searchParams;
  const filter: Filter = FILTERS.find((f) => f === params.status) ?? "all";
  const durable = await getDurable();
  const [counts, schedules] = await Promise.all([countRuns(durable.db), durable.schedules()]);
  const status = filter === "all" ? undefined : filter;
  let page: ListPage;
  try {
    page = await durable.list({ status, limit: 25, ...(params.cursor ? { cursor: params.cursor } : {}) });
  } catch (e) {
    if (!InvalidInputError.is(e)) throw e;
    page = await durable.list({ status, limit: 25 }); // a cursor this API did not hand out: first page
  }
  const outcomes = await readOutcomes(durable.db, page.runs);
  const now = Date.now();
  const hrefFor = (f: Filter, cursor?: string) => {
    const query = new URLSearchParams();
    if (f !== "all") query.set("status", f);
    if (cursor) query.set("cursor", cursor);
    const text = query.toString();
    return text ? `/?${text}` : "/";
  };

  return (
    <>
      <header className="hero">
        <h1>Durable runs</h1>
        <p className="lede">
          Multi-step work that survives being killed halfway, on nothing but Postgres and ordinary route handlers. Start
          a demo, then watch its steps: every completed step leaves a receipt, and a replay answers from it.
        </p>
        <p>
          <Link href="/chat/new" className="button" data-testid="chat-demo-link">
            Open the support chat →
          </Link>{" "}
          <span className="small muted">an agent with tools, each answer a run: reload, stop, approve a refund</span>
        </p>
      </header>

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

      <section aria-labelledby="runs-title" className="runs-section">
        <div className="runs-head">
          <h2 id="runs-title" className="section-title">
            Runs
          </h2>
          <nav className="filters" aria-label="Filter by status">
            {FILTERS.map((f) => (
              <Link
                key={f}
                href={hrefFor(f)}
                className={f === filter ? "filter filter-active" : "filter"}
                aria-current={f === filter ? "page" : undefined}
              >
                {f === "all" ? "All" : f[0]!.toUpperCase() + f.slice(1)}{" "}
                <span className="filter-count">{countLabel(counts, f)}</span>
              </Link>
            ))}
          </nav>
        </div>
        {page.runs.length === 0 ? (
          <div className="panel empty">
            {counts.all === 0 ? "No runs yet. Start a demo above." : `No ${filter} runs.`}
          </div>
        ) : (
          <RunsTable runs={page.runs} outcomes={outcomes} now={now} />
        )}
        <div className="pager">
          {params.cursor ? <Link href={hrefFor(filter)}>← Newest</Link> : <span />}
          {page.nextCursor ? <Link href={hrefFor(filter, page.nextCursor)}>Older →</Link> : null}
        </div>
      </section>
      <SchedulesCard schedules={schedules} now={now} />
      <AutoRefresh active={counts.pending + counts.running + counts.waiting > 0} />
    </>
  );
}
