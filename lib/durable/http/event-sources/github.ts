import { parseGithubSecrets, verifyGithubSignature } from "../../auth/github-signature";
import { bodyJson, refuse, sourceSecrets } from "./source-support";
import type { EventSource, InboundVerdict, SourceSecret } from "./types";

export interface GithubSourceOptions {
  /**
   * The webhook's secret, taken whole (a GitHub secret may hold commas); a list to rotate.
   * Default: GITHUB_WEBHOOK_SECRET, read at each delivery.
   */
  secret?: SourceSecret;
}

/**
 * The payload of a GitHub delivery: the JSON body, or the `payload` field of a form-encoded one
 * (a webhook whose content type is `application/x-www-form-urlencoded`).
 */
function payloadOf(body: Uint8Array, contentType: string | null): { value: unknown } | undefined {
  if (!/^application\/x-www-form-urlencoded\b/i.test(contentType ?? "")) return bodyJson(body);
  let form: string;
  try {
    form = new TextDecoder("utf-8", { fatal: true }).decode(body);
  } catch {
    return undefined;
  }
  const payload = new URLSearchParams(form).get("payload");
  return payload === null ? undefined : bodyJson(new TextEncoder().encode(payload));
}

/**
 * GitHub's webhooks (auth/github-signature.ts): `x-hub-signature-256` over the raw body; published
 * as `github.<x-github-event>` (`github.push`, `github.pull_request`) with `x-github-delivery` as
 * the event id: a redelivery from GitHub's settings page carries the same id and starts nothing.
 */
export function githubSource(options: GithubSourceOptions = {}): EventSource {
  const secrets = sourceSecrets({
    label: "GitHub",
    given: options.secret,
    envName: "GITHUB_WEBHOOK_SECRET",
    parse: parseGithubSecrets,
  });
  return {
    verify({ body, headers }): InboundVerdict {
      const verdict = verifyGithubSignature(secrets(), headers.get("x-hub-signature-256"), body);
      if (!verdict.ok) return refuse(401, `GitHub signature refused: ${verdict.reason.replace(/_/g, " ")}`);
      const id = headers.get("x-github-delivery");
      const type = headers.get("x-github-event");
      if (!id || !type) return refuse(400, "the GitHub delivery has no x-github-delivery or no x-github-event");
      const payload = payloadOf(body, headers.get("content-type"));
      if (payload === undefined) return refuse(400, "the GitHub payload is not JSON");
      return { ok: true, id, type, data: payload.value };
    },
  };
}
