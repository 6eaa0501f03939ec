import { providerTotals, requestCounts, sumOf } from "../mock-providers/stats";

/** What each mock provider did over all runs: requests against effects, and never an effect twice. */
export async function ProviderTotals() {
  const [totals, counts] = await Promise.all([providerTotals(), requestCounts()]);
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
      <h2 className="section-title">Totals, all runs</h2>
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
    </>
  );
}
