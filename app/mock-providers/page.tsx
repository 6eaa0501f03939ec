import Link from "next/link";
import { AutoRefresh } from "../components/auto-refresh";
import { DashboardClosed } from "../components/dashboard-closed";
import { dashboardAccess } from "../dashboard-access";
import { ProviderTotals } from "../components/provider-totals";
import { RequestLog } from "../components/request-log";
import { getDurable } from "../durable";
import { requestLog } from "./stats";

export const dynamic = "force-dynamic";
export const metadata = { title: "Mock providers · durable-next" };

type Props = { searchParams: Promise<{ run?: string; before?: string }> };

/**
 * The providers' side of the demos: what they received and what they did. The point of the
 * idempotency keys is visible here: requests exceed effects, and no effect happened twice. The
 * request log pages by 50, newest first (`?before=` is the cursor); `?run=` keeps one run's.
 */
export default async function MockProvidersPage({ searchParams }: Props) {
  const access = await dashboardAccess();
  if (access !== "open") return <DashboardClosed access={access} next="/mock-providers" />;
  const params = await searchParams;
  const runId = params.run || undefined;
  // The cursor is the id of the last request on the page before; anything else starts at the newest.
  const before = /^[1-9][0-9]{0,15}$/.test(params.before ?? "") ? Number(params.before) : undefined;
  await getDurable(); // opens the database the providers keep their state in
  const log = await requestLog({ runId, before, limit: 50 });
  const hrefFor = (query: { run?: string; before?: number }) => {
    const text = new URLSearchParams(
      Object.entries(query).flatMap(([key, value]) => (value === undefined ? [] : [[key, String(value)]])),
    ).toString();
    return text ? `/mock-providers?${text}` : "/mock-providers";
  };
  return (
    <>
      <nav className="crumbs">
        <Link href="/">← All runs</Link>
      </nav>
      <header className="hero">
        <h1>Mock providers</h1>
        <p className="lede">
          Stand-ins for a payment processor, an email API and an export service, with latency, transient failures and
          idempotency keys that work like the real ones. Their state lives in the same database, so you can count: more
          requests than effects, and never an effect twice.
        </p>
      </header>
      {runId ? null : <ProviderTotals />}
      <section className="panel" aria-labelledby="requests-title">
        <div className="runs-head">
          <h2 id="requests-title">
            {runId ? (
              <>
                Requests of run <code>{runId}</code>
              </>
            ) : (
              "Requests, all runs"
            )}
          </h2>
          {runId ? (
            <Link href={hrefFor({})} className="small">
              Show all runs
            </Link>
          ) : null}
        </div>
        {log.requests.length === 0 ? (
          <p className="muted">
            {runId ? "No requests from this run." : "No requests yet. Start a demo on the runs page."}
          </p>
        ) : (
          <RequestLog requests={log.requests} />
        )}
        <div className="pager">
          {before !== undefined ? <Link href={hrefFor({ run: runId })}>← Newest</Link> : <span />}
          {log.nextBefore !== null ? <Link href={hrefFor({ run: runId, before: log.nextBefore })}>Older →</Link> : null}
        </div>
      </section>
      <AutoRefresh active everyMs={4000} />
    </>
  );
}
