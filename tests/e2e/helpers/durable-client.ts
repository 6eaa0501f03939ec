// A small HTTP client for the durable routes of a running app, as an outside caller sees them.
import { randomBytes } from "node:crypto";
import type { RunStatus } from "@/lib/durable";
import { signWebhook } from "@/lib/durable/auth/webhook";

/** Fresh secrets for one server: the test and the server must agree on them. */
export function makeSecrets() {
  const signalKey = randomBytes(32);
  return {
    signalKey,
    env: {
      CRON_SECRET: `cron-${randomBytes(12).toString("hex")}`,
      DURABLE_SECRET: `admin-${randomBytes(12).toString("hex")}`,
      DURABLE_SIGNAL_SECRET: `whsec_${signalKey.toString("base64")}`,
    },
  };
}

export interface Started {
  id: string;
  created: boolean;
  status: string;
  statusToken: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class DurableClient {
  constructor(
    readonly baseUrl: string,
    readonly adminSecret: string,
    readonly signalKey: Uint8Array,
  ) {}

  /** POST /api/durable/runs with the admin bearer; throws unless 201 or 200. */
  async start(workflow: string, input: unknown, id?: string): Promise<Started> {
    const response = await fetch(`${this.baseUrl}/api/durable/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.adminSecret}`, "content-type": "application/json" },
      body: JSON.stringify({ workflow, input, ...(id === undefined ? {} : { id }) }),
    });
    const body = await response.text();
    if (response.status !== 201 && response.status !== 200)
      throw new Error(`start ${workflow} → ${response.status} ${body}`);
    return JSON.parse(body) as Started;
  }

  /** GET /api/durable/runs/{id} with a bearer (the run's status token by default). */
  async status(id: string, token: string): Promise<{ http: number; body: RunStatus & { error: unknown } }> {
    const response = await fetch(`${this.baseUrl}/api/durable/runs/${encodeURIComponent(id)}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return { http: response.status, body: (await response.json()) as RunStatus & { error: unknown } };
  }

  /** Polls the status route every `everyMs` until `done(status)`; throws with the last status on timeout. */
  async waitFor(
    id: string,
    token: string,
    done: (s: RunStatus) => boolean,
    { everyMs = 10, timeoutMs = 20_000 } = {},
  ): Promise<RunStatus> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    for (;;) {
      const { http, body } = await this.status(id, token);
      if (http !== 200) throw new Error(`status of ${id} → ${http} ${JSON.stringify(body)}`);
      if (done(body)) return body;
      last = body;
      if (Date.now() > deadline)
        throw new Error(`run ${id} did not get there in ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
      await sleep(everyMs);
    }
  }

  /** POST /api/durable/signal signed as a Standard Webhooks delivery (or with `signature` given as is). */
  async signal(
    runId: string,
    name: string,
    payload: unknown,
    opts: { deliveryId?: string; signature?: string; key?: Uint8Array } = {},
  ) {
    const body = JSON.stringify({ runId, name, payload });
    const deliveryId = opts.deliveryId ?? `msg_${randomBytes(9).toString("hex")}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const response = await fetch(`${this.baseUrl}/api/durable/signal`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": deliveryId,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": opts.signature ?? signWebhook(opts.key ?? this.signalKey, deliveryId, timestamp, body),
      },
      body,
    });
    return { http: response.status, body: (await response.json()) as Record<string, unknown>, deliveryId };
  }
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
