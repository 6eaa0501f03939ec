import { InvalidInputError } from "../../errors";
import { parseStripeSecrets, STRIPE_TOLERANCE_SECONDS, verifyStripeSignature } from "../../auth/stripe-signature";
import { bodyJson, refuse, sourceSecrets, stringField } from "./source-support";
import type { EventSource, SourceSecret } from "./types";

export interface StripeSourceOptions {
  /**
   * The endpoint's signing secret (`whsec_…`; comma-separated or a list to rotate). Default:
   * STRIPE_WEBHOOK_SECRET, read at each delivery.
   */
  secret?: SourceSecret;
  /** Seconds a delivery's signed timestamp may be old (300, as Stripe's libraries). */
  toleranceSeconds?: number;
}

/**
 * Stripe's webhooks (auth/stripe-signature.ts): `stripe-signature` over the raw body; the event is
 * the body, a Stripe Event, published as `stripe.<its type>` (`stripe.payment_intent.succeeded`)
 * with its id (`evt_…`, the same in every redelivery) as the event id.
 */
export function stripeSource(options: StripeSourceOptions = {}): EventSource {
  const tolerance = options.toleranceSeconds ?? STRIPE_TOLERANCE_SECONDS;
  if (!Number.isSafeInteger(tolerance) || tolerance <= 0) {
    throw new InvalidInputError(
      `stripeSource's toleranceSeconds must be a whole number of seconds > 0, not ${tolerance}`,
    );
  }
  const secrets = sourceSecrets({
    label: "Stripe",
    given: options.secret,
    envName: "STRIPE_WEBHOOK_SECRET",
    parse: parseStripeSecrets,
  });
  return {
    verify({ body, headers, nowSeconds }) {
      const verdict = verifyStripeSignature({
        secrets: secrets(),
        header: headers.get("stripe-signature"),
        body,
        nowSeconds,
        toleranceSeconds: tolerance,
      });
      if (!verdict.ok) return refuse(401, `Stripe signature refused: ${verdict.reason.replace(/_/g, " ")}`);
      const event = bodyJson(body)?.value;
      if (event === undefined) return refuse(400, "the Stripe event is not JSON");
      const id = stringField(event, "id");
      const type = stringField(event, "type");
      if (id === undefined || type === undefined) return refuse(400, "the Stripe event has no id or no type");
      return { ok: true, id, type, data: event };
    },
  };
}
