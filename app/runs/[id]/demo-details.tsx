import { sql } from "kysely";
import Link from "next/link";
import { ResearchPanel, type ResearchOutput } from "@/app/components/research-panel";
import { getDurable } from "@/app/durable";
import { formatMoney } from "@/app/mock-providers/payments";
import { requestCounts, sumOf, type RequestCount } from "@/app/mock-providers/stats";
import { providerDb } from "@/app/mock-providers/db";
import type { RunStatus } from "@/lib/durable";
import { payloadCodecOf } from "@/lib/durable/engine/payloads";

/**
 * What a demo shows live across its run page (RunView's `live`): for a research run, the outline
 * and the answer as it is written, read from the run's stream in the browser. The server reads what
 * the page shows before that, through the library: the outline from the stream, the stored answer.
 */
export async function DemoLive({ run, token }: { run: RunStatus; token: string }) {
  if (run.workflow !== "research") return null;
  const durable = await getDurable();
  // The outline is the first thing the run streams (its answer follows it).
  const stream = await durable.readStream(run.id, { limit: 10 });
  const outline = stream?.chunks.find((c) => c.stepId === "outline" && !c.broken)?.data;
  const output = (run.output ?? null) as ResearchOutput | null;
  return (
    <ResearchPanel
      runId={run.id}
      token={token}
      question={output?.question ?? null}
      outline={typeof outline === "string" ? outline : null}
      status={run.status}
      output={output}
    />
  );
}

/**
 * The demo's side of a run, read on the server from the app's own tables: the order and its stock,
 * the outbox, the provider's view of every request. This is where the guarantees show: one charge
 * however many requests, one email per message however many sends.
 */
export async function DemoDetails({ runId, workflow }: { runId: string; workflow: string }) {
  const counts = await requestCounts(runId);
  switch (workflow) {
    case "checkout":
      return <CheckoutDetails runId={runId} counts={counts} />;
    case "plan-approval":
      return <PlanApprovalDetails runId={runId} counts={counts} />;
    case "outbox-delivery":
      return <OutboxDetails runId={runId} counts={counts} />;
    case "report-export":
      return <ReportExportDetails runId={runId} counts={counts} />;
    default:
      return null;
  }
}

/** The checkout demo: the order and its stock, the charges and the webhook's deliveries. */
async function CheckoutDetails({ runId, counts }: { runId: string; counts: RequestCount[] }) {
  const db = providerDb();
  const { rows: orders } = await sql<any>`
    select o.id, o.quantity, o.amount_cents, o.status, i.name, i.on_hand, i.reserved
    from demo_orders o join demo_inventory i on i.sku = o.sku where o.run_id = ${runId}`.execute(db);
  const { rows: payments } = await sql<any>`
    select id, kind, amount_cents, status from mock_payments
    where run_id = ${runId} order by created_at`.execute(db);
  const { rows: hooks } = await sql<any>`
    select outcome, count(*)::int as n from mock_webhook_deliveries
    where run_id = ${runId} group by outcome`.execute(db);
  const order = orders[0];
  const hook = (outcome: string) => hooks.find((h) => h.outcome === outcome)?.n ?? 0;
  const sent = hook("delivered") + hook("duplicate") + hook("refused");
  return (
    <section className="panel" data-testid="demo-details">
      <h2>Shop and payment provider</h2>
      {order ? (
        <dl className="facts">
          <dt>Order</dt>
          <dd>
            <code>{order.id}</code> · {order.quantity} × {order.name} · {formatMoney(order.amount_cents)} ·{" "}
            <strong>{order.status}</strong>
          </dd>
          <dt>Stock (all runs)</dt>
          <dd>
            {order.on_hand} on hand, {order.reserved} reserved
          </dd>
        </dl>
      ) : (
        <p className="muted">No order yet.</p>
      )}
      <ProviderLine
        counts={counts}
        provider="payments"
        operation="charge"
        noun="charge"
        made={payments.filter((p) => p.kind === "charge").length}
      />
      {payments.some((p) => p.kind === "refund") ? (
        <ProviderLine
          counts={counts}
          provider="payments"
          operation="refund"
          noun="refund"
          made={payments.filter((p) => p.kind === "refund").length}
        />
      ) : null}
      {payments
        .filter((p) => p.kind === "charge")
        .map((p) => (
          <p key={p.id} className="small">
            <code>{p.id}</code> {formatMoney(p.amount_cents)} · {p.status}
          </p>
        ))}
      {sent > 0 ? (
        <p className="small">
          Webhook <code>payment.settled</code>: sent {sent} times, <strong>{hook("delivered")} delivered</strong>,{" "}
          {hook("duplicate")} recognised as a repeat
          {hook("refused") ? `, ${hook("refused")} refused` : ""}.
        </p>
      ) : null}
      <ProviderLink runId={runId} />
    </section>
  );
}

/** The plan-approval demo: the plan as journaled at start, and the refunds made from it. */
async function PlanApprovalDetails({ runId, counts }: { runId: string; counts: RequestCount[] }) {
  const durable = await getDurable();
  const db = providerDb();
  const { rows } = await sql<{
    result: any;
  }>`select result from durable_steps where run_id = ${runId} and step_id = 'plan'`.execute(durable.db);
  // The receipt as stored, opened with the instance's codec when it is sealed (docs/guide/encryption.md).
  const plan = (await payloadCodecOf(durable).open(rows[0]?.result)) as
    | { items: { id: string; customer: string; chargeRef: string; amountCents: number }[]; draftedAt: string }
    | undefined;
  const { rows: refunds } =
    await sql<any>`select id, reference from mock_payments where run_id = ${runId} and kind = 'refund'`.execute(db);
  return (
    <section className="panel" data-testid="demo-details">
      <h2>The plan, frozen at start</h2>
      {plan ? (
        <>
          <table className="mini-table">
            <thead>
              <tr>
                <th>Customer</th>
                <th>Refund</th>
                <th>At the provider</th>
              </tr>
            </thead>
            <tbody>
              {plan.items.map((item) => {
                const refund = refunds.find((r) => r.reference === item.chargeRef);
                return (
                  <tr key={item.id}>
                    <td>{item.customer}</td>
                    <td>{formatMoney(item.amountCents)}</td>
                    <td>{refund ? <code>{refund.id}</code> : <span className="muted">not yet</span>}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <p className="small muted">
            Drafted {plan.draftedAt.slice(0, 19).replace("T", " ")} UTC and journaled; every replay reads this, never a
            new draft.
          </p>
        </>
      ) : (
        <p className="muted">Not drafted yet.</p>
      )}
      {sumOf(counts, { provider: "payments" }) > 0 ? (
        <ProviderLine counts={counts} provider="payments" operation="refund" noun="refund" made={refunds.length} />
      ) : null}
      <ProviderLink runId={runId} />
    </section>
  );
}

/** The outbox demo: each message's status and the email provider's id for it. */
async function OutboxDetails({ runId, counts }: { runId: string; counts: RequestCount[] }) {
  const db = providerDb();
  const { rows } = await sql<any>`
    select message_key, subject, status, provider_message_id from demo_outbox
    where run_id = ${runId} order by position`.execute(db);
  const { rows: sent } = await sql<{
    n: number;
  }>`select count(*)::int as n from mock_email_messages where run_id = ${runId}`.execute(db);
  return (
    <section className="panel" data-testid="demo-details">
      <h2>Outbox and email provider</h2>
      {rows.length ? (
        <table className="mini-table">
          <thead>
            <tr>
              <th>Message</th>
              <th>Status</th>
              <th>Provider id</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((m) => (
              <tr key={m.message_key}>
                <td>{m.subject}</td>
                <td>{m.status}</td>
                <td>
                  {m.provider_message_id ? <code>{m.provider_message_id}</code> : <span className="muted">—</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">Nothing queued yet.</p>
      )}
      <ProviderLine counts={counts} provider="email" operation="send" noun="email" made={sent[0]?.n ?? 0} />
      <ProviderLink runId={runId} />
    </section>
  );
}

/** The report-export demo: the long operation's progress and the polls it took. */
async function ReportExportDetails({ runId, counts }: { runId: string; counts: RequestCount[] }) {
  const db = providerDb();
  const { rows } = await sql<any>`
    select id, duration_ms, (extract(epoch from (clock_timestamp() - submitted_at)) * 1000)::int as elapsed_ms
    from mock_operations where run_id = ${runId}`.execute(db);
  const op = rows[0];
  const polls = sumOf(counts, { provider: "operations", operation: "get" });
  const failedPolls = sumOf(counts, { provider: "operations", operation: "get", outcome: "failed" });
  return (
    <section className="panel" data-testid="demo-details">
      <h2>Export service</h2>
      {op ? (
        <dl className="facts">
          <dt>Operation</dt>
          <dd>
            <code>{op.id}</code> · {Math.min(100, Math.round((op.elapsed_ms / op.duration_ms) * 100))}% done
          </dd>
          <dt>Polls</dt>
          <dd>
            {polls} status reads, {failedPolls} failed and were backed off; one receipt
          </dd>
        </dl>
      ) : (
        <p className="muted">Not submitted yet.</p>
      )}
      <ProviderLine counts={counts} provider="operations" operation="submit" noun="operation" made={rows.length} />
      <ProviderLink runId={runId} />
    </section>
  );
}

/** "charges: 1 · requests: 3 (1 lost response, 1 failed, 1 duplicate deduped)" */
function ProviderLine({
  counts,
  provider,
  operation,
  noun,
  made,
}: {
  counts: RequestCount[];
  provider: string;
  operation: string;
  noun: string;
  made: number;
}) {
  const requests = sumOf(counts, { provider, operation });
  if (requests === 0) return null;
  const lost = sumOf(counts, { provider, operation, outcome: "lost_response" });
  const failed = sumOf(counts, { provider, operation, outcome: ["failed", "rejected"] });
  const deduped = sumOf(counts, { provider, operation, outcome: "deduped" });
  const parts = [
    lost && `${lost} lost response`,
    failed && `${failed} failed`,
    deduped && `${deduped} duplicate${deduped === 1 ? "" : "s"} deduped`,
  ].filter(Boolean);
  return (
    <p className="provider-line" data-testid={`provider-${provider}-${operation}`}>
      <strong>
        {made} {noun}
        {made === 1 ? "" : "s"}
      </strong>{" "}
      made for {requests} request{requests === 1 ? "" : "s"}
      {parts.length ? <> ({parts.join(", ")})</> : null}
    </p>
  );
}

/** The providers' request log, filtered to this run. */
function ProviderLink({ runId }: { runId: string }) {
  return (
    <p className="small">
      <Link href={`/mock-providers?run=${encodeURIComponent(runId)}`} data-testid="provider-log-link">
        This run's requests at the mock providers →
      </Link>
    </p>
  );
}
