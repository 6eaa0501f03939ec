import { parseWebhookSecrets, verifyWebhook, WEBHOOK_TOLERANCE_SECONDS } from "../../auth/webhook";
import { InvalidInputError } from "../../errors";
import { bodyJson, refuse, sourceSecrets, stringField } from "./source-support";
import type { EventSource, SourceSecret } from "./types";

export interface StandardWebhooksSourceOptions {
  /**
   * The sender's key, `whsec_<base64>` (comma-separated or a list to rotate). Required: no
   * variable is read for it; `process.env.X` that is unset answers every delivery 503.
   */
  secret: SourceSecret | undefined;
  /** Seconds a delivery's `webhook-timestamp` may be from our clock, either way (300, as the spec). */
  toleranceSeconds?: number;
}

const keysOf = (secret: SourceSecret) => parseWebhookSecrets(typeof secret === "string" ? secret : secret.join(","));

/**
 * Any sender that follows Standard Webhooks (https://www.standardwebhooks.com; auth/webhook.ts):
 * `webhook-id`, `webhook-timestamp`, `webhook-signature`; the payload is `{ type, timestamp, data }`,
 * published as `<source>.<type>` with `webhook-id` as the event id.
 */
export function standardWebhooksSource(options: StandardWebhooksSourceOptions): EventSource {
  if (typeof options !== "object" || options === null) {
    throw new InvalidInputError("standardWebhooksSource takes { secret }: the sender's whsec_ key");
  }
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  if (!Number.isSafeInteger(tolerance) || tolerance <= 0) {
    throw new InvalidInputError(
      `standardWebhooksSource's toleranceSeconds must be a whole number > 0, not ${tolerance}`,
    );
  }
  const keys = sourceSecrets({ label: "Standard Webhooks", given: options.secret, parse: keysOf });
  return {
    verify({ body, headers, nowSeconds }) {
      const verdict = verifyWebhook({ keys: keys(), headers, body, nowSeconds, toleranceSeconds: tolerance });
      if (!verdict.ok) return refuse(401, `webhook signature refused: ${verdict.reason.replace(/_/g, " ")}`);
      const payload = bodyJson(body)?.value;
      if (payload === undefined) return refuse(400, "the webhook's payload is not JSON");
      const type = stringField(payload, "type");
      if (type === undefined) return refuse(400, "the webhook's payload has no type");
      return { ok: true, id: verdict.id, type, data: payload };
    },
  };
}
