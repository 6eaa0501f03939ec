// Outbound webhooks (docs/guide/lifecycle.md, "Webhooks"): createDurable({ webhooks }) checked
// once, and the built-in workflow each delivery is a run of. A delivery run is started by the
// trigger durable_runs_followups in the transaction that ends the run it reports (docs/sql.md,
// "Follow-ups"); its input names the endpoint by url, never its secret, which the delivery looks
// up here in the instance's current configuration.
import * as z from "zod";
import { parseWebhookSecrets, signWebhook } from "../auth/webhook";
import { type Duration, toBoundedMs } from "../duration";
import { InvalidInputError } from "../errors";
import type { Followups } from "../store";
import type { AnyWorkflow } from "../types";
import { defineWorkflow } from "./define-workflow";

/** The events a webhook may receive: a run's end, and `run.waiting` when asked for. */
export type WebhookEvent = "run.completed" | "run.failed" | "run.cancelled" | "run.waiting";

/** An endpoint `createDurable({ webhooks })` sends run events to, signed as Standard Webhooks. */
export interface WebhookEndpoint {
  /** An http(s) URL; each delivery is a POST of `{ type, timestamp, data }`. */
  url: string;
  /** Which events it receives (at least one). */
  events: readonly WebhookEvent[];
  /** `whsec_` followed by base64 (24 bytes or more; several, comma-separated, to rotate): the signing key. */
  secret: string;
  /** Attempts per delivery before its run fails (1–50, default 10). */
  attempts?: number;
  /** The delay after the first failed attempt, doubled after each up to 6 hours (default "30s"). */
  retryDelay?: Duration;
}

/** The run status each event stands for: the key of a run's followups it is listed under. */
export const STATUS_OF_EVENT: Readonly<Record<WebhookEvent, keyof Followups>> = {
  "run.completed": "completed",
  "run.failed": "failed",
  "run.cancelled": "cancelled",
  "run.waiting": "waiting",
};

/** The built-in workflow of webhook deliveries: its runs are listed under this name. */
export const WEBHOOK_WORKFLOW = "durable.webhook";

/** An endpoint as checked: its keys parsed, its retry policy in milliseconds. */
export interface ResolvedWebhook {
  url: string;
  events: readonly WebhookEvent[];
  keys: Uint8Array[];
  attempts: number;
  retryDelayMs: number;
}

const MAX_URL_LENGTH = 2048;
const MAX_ATTEMPTS = 50;
const MAX_RETRY_DELAY_MS = 6 * 3_600_000;
const MIN_KEY_BYTES = 24;
/** How long one attempt waits for the endpoint's answer. */
const DELIVERY_TIMEOUT: Duration = "15s";

/** Checks `createDurable({ webhooks })`: a clear error for a bad url, event, secret or policy. */
export function resolveWebhooks(value: unknown): ResolvedWebhook[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidInputError("webhooks is an array of { url, events, secret }");
  const seen = new Set<string>();
  return value.map((entry: unknown, index) => {
    const what = `webhooks[${index}]`;
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
      throw new InvalidInputError(`${what} is an object { url, events, secret }`);
    }
    const endpoint = entry as Partial<WebhookEndpoint>;
    const url = checkUrl(endpoint.url, what);
    if (seen.has(url)) throw new InvalidInputError(`${what}: url ${url} is listed twice`);
    seen.add(url);
    return {
      url,
      events: checkEvents(endpoint.events, what),
      keys: checkSecret(endpoint.secret, what),
      attempts: checkAttempts(endpoint.attempts, what),
      retryDelayMs: checkRetryDelay(endpoint.retryDelay, what),
    };
  });
}

function checkUrl(url: unknown, what: string): string {
  let parsed: URL | null = null;
  try {
    parsed = typeof url === "string" && url.length <= MAX_URL_LENGTH ? new URL(url) : null;
  } catch {
    parsed = null;
  }
  if (!parsed || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
    throw new InvalidInputError(`${what}.url is an http(s) URL of at most ${MAX_URL_LENGTH} characters`);
  }
  return url as string;
}

function checkEvents(events: unknown, what: string): WebhookEvent[] {
  const known = Object.keys(STATUS_OF_EVENT);
  if (!Array.isArray(events) || events.length === 0) {
    throw new InvalidInputError(`${what}.events lists at least one of ${known.join(", ")}`);
  }
  for (const event of events) {
    if (!known.includes(event)) {
      throw new InvalidInputError(`${what}.events: ${JSON.stringify(String(event))} is not one of ${known.join(", ")}`);
    }
  }
  if (new Set(events).size !== events.length) throw new InvalidInputError(`${what}.events lists an event twice`);
  return [...events] as WebhookEvent[];
}

function checkSecret(secret: unknown, what: string): Uint8Array[] {
  if (typeof secret !== "string" || !secret.trim().startsWith("whsec_")) {
    throw new InvalidInputError(`${what}.secret is "whsec_" followed by base64 (${MIN_KEY_BYTES} bytes or more)`);
  }
  let keys: Uint8Array[];
  try {
    keys = parseWebhookSecrets(secret);
  } catch (error) {
    throw new InvalidInputError(`${what}.secret: ${(error as Error).message}`);
  }
  if (keys.some((key) => key.length < MIN_KEY_BYTES)) {
    throw new InvalidInputError(`${what}.secret: a key is shorter than ${MIN_KEY_BYTES} bytes`);
  }
  return keys;
}

function checkAttempts(attempts: unknown, what: string): number {
  if (attempts === undefined) return 10;
  if (typeof attempts !== "number" || !Number.isInteger(attempts) || attempts < 1 || attempts > MAX_ATTEMPTS) {
    throw new InvalidInputError(`${what}.attempts is a whole number from 1 to ${MAX_ATTEMPTS}`);
  }
  return attempts;
}

function checkRetryDelay(delay: unknown, what: string): number {
  if (delay === undefined) return 30_000;
  const ms = toBoundedMs(delay as Duration, `${what}.retryDelay`);
  if (ms > MAX_RETRY_DELAY_MS) throw new InvalidInputError(`${what}.retryDelay is at most 6 hours`);
  return ms;
}

/** A delivery run's input, as durable_start_followups writes it. */
const deliveryInput = z.object({
  url: z.string(),
  type: z.string(),
  timestamp: z.string(),
  data: z.record(z.string(), z.unknown()),
});

/**
 * The delivery workflow of an instance with webhooks: one step that POSTs the Standard Webhooks
 * payload `{ type, timestamp, data }`, signed with every key of the endpoint's secret, with the
 * delivery run's id as `webhook-id` (the same for every attempt: a receiver deduplicates on it).
 * A non-2xx answer, a network error or no answer within 15 s fails the attempt; the step retries
 * with a doubling delay, and after the endpoint's attempts the run fails: the delivery is dead.
 */
export function webhookDeliveryWorkflow(webhooks: readonly ResolvedWebhook[]): AnyWorkflow {
  const byUrl = new Map(webhooks.map((webhook) => [webhook.url, webhook]));
  const workflow = defineWorkflow({
    name: WEBHOOK_WORKFLOW,
    input: deliveryInput,
    async run(ctx, input) {
      const endpoint = byUrl.get(input.url);
      if (!endpoint) {
        throw new Error(
          `webhook ${input.url} is not in this instance's webhooks any more: its secret is unknown, so ` +
            "the delivery cannot be signed",
        );
      }
      const body = JSON.stringify({ type: input.type, timestamp: input.timestamp, data: input.data });
      return ctx.step.run("deliver", (step) => post(endpoint, ctx.runId, body, step.abortSignal), {
        retries: endpoint.attempts - 1,
        retryDelay: endpoint.retryDelayMs,
        retryBackoff: { factor: 2, maxDelay: MAX_RETRY_DELAY_MS },
        timeout: DELIVERY_TIMEOUT,
      });
    },
  });
  deliveryWorkflows.add(workflow);
  return workflow;
}

const deliveryWorkflows = new WeakSet<AnyWorkflow>();

/** Whether `workflow` is an instance's built-in delivery workflow, which no start() may start. */
export const isWebhookDelivery = (workflow: AnyWorkflow): boolean => deliveryWorkflows.has(workflow);

/** One attempt: the signed POST; throws on anything but a 2xx answer. */
async function post(endpoint: ResolvedWebhook, id: string, body: string, signal: AbortSignal) {
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = endpoint.keys.map((key) => signWebhook(key, id, timestamp, body)).join(" ");
  const response = await fetch(endpoint.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signature,
    },
    body,
    signal,
  });
  await response.body?.cancel().catch(() => undefined);
  if (response.status < 200 || response.status > 299) {
    throw new Error(`webhook ${endpoint.url} answered ${response.status} to delivery ${id}`);
  }
  return { status: response.status };
}
