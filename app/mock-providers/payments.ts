import { createHash } from "node:crypto";
import { sql } from "kysely";
import { providerDb } from "./db";
import {
  earlierRequests,
  failAsPlanned,
  latency,
  logRequest,
  MockProviderError,
  plannedFailures,
  providerId,
} from "./simulate";

/**
 * A mock payment provider in the style of Stripe: charges and refunds take an idempotency key, a
 * repeat of a key returns the first result instead of charging again (and is counted as a
 * duplicate), and a key reused with different parameters is refused. Some requests time out
 * *after* the money moved: only the idempotency key keeps the retry from charging twice.
 * Settlement arrives later as a `payment.settled` webhook, delivered at least once (here: twice).
 */

export interface Payment {
  id: string;
  kind: "charge" | "refund";
  reference: string;
  amountCents: number;
  currency: string;
  status: string;
}

interface PaymentRequest {
  runId: string;
  /** The order (charge) or the charge (refund) this is for. */
  reference: string;
  amountCents: number;
  currency: string;
  idempotencyKey: string;
}

const toPayment = (row: any): Payment => ({
  id: row.id,
  kind: row.kind,
  reference: row.reference,
  amountCents: row.amount_cents,
  currency: row.currency,
  status: row.status,
});

/** Insert-if-absent on the idempotency key, then read back: the first request's result wins. */
async function createOnce(
  kind: Payment["kind"],
  request: PaymentRequest,
): Promise<{ payment: Payment; created: boolean }> {
  const id = providerId(kind === "charge" ? "ch" : "re");
  const { rows } = await sql<any>`
    with inserted as (
      insert into mock_payments (id, kind, idempotency_key, run_id, reference, amount_cents, currency, status)
      values (${id}, ${kind}, ${request.idempotencyKey}, ${request.runId}, ${request.reference},
        ${request.amountCents}, ${request.currency}, 'succeeded')
      on conflict (idempotency_key) do nothing
      returning *
    )
    select *, true as created from inserted
    union all
    select *, false as created from mock_payments
    where idempotency_key = ${request.idempotencyKey} and not exists (select 1 from inserted)`.execute(providerDb());
  return { payment: toPayment(rows[0]), created: rows[0].created };
}

async function pay(kind: Payment["kind"], request: PaymentRequest, maxFailures: number): Promise<Payment> {
  await latency(120, 400);
  const entry = { provider: "payments" as const, operation: kind, key: request.idempotencyKey, runId: request.runId };
  const before = await earlierRequests("payments", kind, request.idempotencyKey);
  if (before < plannedFailures(request.idempotencyKey, maxFailures)) {
    if (before === 0) {
      // The money moves, then the connection drops: the caller sees a timeout and must retry.
      await createOnce(kind, request);
      return failAsPlanned(
        entry,
        new MockProviderError(504, "gateway timeout (the payment went through; the response was lost)"),
        "lost_response",
      );
    }
    return failAsPlanned(entry, new MockProviderError(503, "payment network unavailable, try again"));
  }
  const { payment, created } = await createOnce(kind, request);
  if (!created && (payment.amountCents !== request.amountCents || payment.reference !== request.reference)) {
    return failAsPlanned(
      entry,
      new MockProviderError(422, "idempotency key reused with different parameters", false),
      "failed",
    );
  }
  await logRequest({
    ...entry,
    outcome: created ? "created" : "deduped",
    detail: `${payment.id} ${formatMoney(payment.amountCents, payment.currency)}`,
  });
  return payment;
}

/** Charges a card. Pass the step's `externalKey` as `idempotencyKey`. */
export const charge = (request: PaymentRequest) => pay("charge", request, 2);

/** Refunds (part of) a charge. Pass the step's `externalKey` as `idempotencyKey`. */
export const refund = (request: PaymentRequest) => pay("refund", request, 1);

export type DeliveryOutcome = "delivered" | "duplicate" | "refused";

/**
 * Settles the run's charge and sends the `payment.settled` webhook, twice with the same webhook
 * id, as providers that deliver at least once do. `deliver` is the app's webhook endpoint; here
 * it calls `durable.signal` directly (what POST /api/durable/signal does with a verified request).
 */
export async function settle(
  runId: string,
  deliver: (webhookId: string, payload: { chargeId: string; amountCents: number }) => Promise<DeliveryOutcome>,
): Promise<DeliveryOutcome[]> {
  await latency();
  const db = providerDb();
  const { rows } = await sql<any>`
    update mock_payments set status = 'settled', settled_at = coalesce(settled_at, now())
    where run_id = ${runId} and kind = 'charge' and status in ('succeeded', 'settled')
    returning *`.execute(db);
  const settled = rows[0];
  if (!settled) throw new MockProviderError(404, "the provider has no charge for this run yet", false);
  // One event, one id: a redelivery (or a second click) carries the same webhook id.
  const digest = createHash("sha256").update(`${settled.id}\u0000payment.settled`).digest("hex");
  const webhookId = `msg_${digest.slice(0, 24)}`;
  const outcomes: DeliveryOutcome[] = [];
  for (let delivery = 0; delivery < 2; delivery++) {
    const outcome = await deliver(webhookId, { chargeId: settled.id, amountCents: settled.amount_cents });
    await sql`insert into mock_webhook_deliveries (webhook_id, run_id, event, outcome)
      values (${webhookId}, ${runId}, 'payment.settled', ${outcome})`.execute(db);
    outcomes.push(outcome);
  }
  return outcomes;
}

export function formatMoney(cents: number, currency = "EUR"): string {
  return new Intl.NumberFormat("en-IE", { style: "currency", currency }).format(cents / 100);
}
