import Link from "next/link";
import { AutoRefresh } from "../components/auto-refresh";
import { DashboardOff, dashboardEnabled } from "../components/dashboard-access";
import { formatClock } from "../components/format";
import { getDurable } from "../durable";
import { providerTotals, recentRequests, requestCounts, sumOf } from "./stats";

export const dynamic = "force-dynamic";
export const metadata = { title: "Mock providers · durable-next" };

const OUTCOME_LABELS: Record<string, string> = {
  created: "created",
  deduped: "duplicate, deduped",
  failed: "failed",
  lost_response: "done, response lost",
  rejected: "rejected",
  ok: "ok",
};

/**
 * The providers' side of the demos: what they received and what they did. The point of the
 * idempotency keys is visible here: requests exceed effects, and no effect happened twice.
 */
export default async function MockProvidersPage() {
  if (!dashboardEnabled()) return <DashboardOff />;
  await getDurable(); // opens the database the providers keep their state in
  const [totals, counts, recent] = await Promise.all([providerTotals(), requestCounts(), recentRequests(40)]);
  const of = (provider: string, operation: string, outcome?: string | string[]) =>
    sumOf(counts, { provider, operation, ...(outcome ? { outcome } : {}) });

  const cards = [
    {
      name: "Payments",
      blurb: "Charges and refunds with idempotency keys; settles charges by webhook.",
      figures: [
        ["charges", totals.charges],
        ["refunds", totals.refunds],
        ["requests", of("payments", "charge") + of("payments", "refund")],
        ["duplicate requests deduped", of("payments", "charge", "deduped") + of("payments", "refund", "deduped")],
        [
          "timeouts after the money moved",
          of("payments", "charge", "lost_response") + of("payments", "refund", "lost_response"),
        ],
        ["webhooks delivered", totals.webhooks.delivered],
        ["webhook repeats ignored", totals.webhooks.duplicate],
      ],
    },
    {
      name: "Email",
      blurb: "Flaky: 429 with retry-after, 503, and sends accepted whose response was lost.",
      figures: [
        ["emails sent", totals.emails],
        ["requests", of("email", "send")],
        ["duplicate sends deduped", of("email", "send", "deduped")],
        ["transient failures", of("email", "send", ["failed", "lost_response"])],
      ],
    },
    {
      name: "Export service",
      blurb: "Long-running operations: submit once, then poll until done.",
      figures: [
        ["operations", totals.operations],
        ["duplicate submits deduped", of("operations", "submit", "deduped")],
        ["status polls", of("operations", "get")],
        ["failed polls", of("operations", "get", "failed")],
      ],
    },
  ] as const;

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
      <div className="provider-grid">
        {cards.map((card) => (
          <section key={card.name} className="panel provider-card" data-provider={card.name}>
            <h2>{card.name}</h2>
            <p className="muted small">{card.blurb}</p>
            <dl className="figures">
              {card.figures.map(([label, value]) => (
                <div key={label}>
                  <dt>{label}</dt>
                  <dd>{value}</dd>
                </div>
              ))}
            </dl>
          </section>
        ))}
      </div>
      <section className="panel">
        <h2>Latest requests</h2>
        {recent.length === 0 ? (
          <p className="muted">No requests yet. Start a demo on the runs page.</p>
        ) : (
          <div className="table-wrap">
            <table className="runs-table compact">
              <thead>
                <tr>
                  <th className="nowrap">Time (UTC)</th>
                  <th>Provider</th>
                  <th>Request</th>
                  <th>Idempotency key</th>
                  <th>Outcome</th>
                  <th>Run</th>
                </tr>
              </thead>
              <tbody>
                {recent.map((r) => (
                  <tr key={r.id}>
                    <td className="nowrap">{formatClock(r.at)}</td>
                    <td>{r.provider}</td>
                    <td>{r.operation}</td>
                    <td>
                      {r.idempotencyKey ? (
                        <code className="key">{r.idempotencyKey}</code>
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                    <td>
                      <span className={`outcome outcome-${r.outcome}`}>{OUTCOME_LABELS[r.outcome] ?? r.outcome}</span>
                      {r.detail ? <div className="muted small">{r.detail}</div> : null}
                    </td>
                    <td>
                      {r.runId ? (
                        <Link href={`/runs/${encodeURIComponent(r.runId)}`}>
                          <code>{r.runId}</code>
                        </Link>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <AutoRefresh active everyMs={4000} />
    </>
  );
}
