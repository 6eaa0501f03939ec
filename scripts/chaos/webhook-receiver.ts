// Scenario 14's outside world for outbound webhooks (docs/guide/lifecycle.md, "Webhooks"): an HTTP
// server that checks each delivery's Standard Webhooks signature and records it by `webhook-id`,
// answering 500 to a seeded share of first attempts so that deliveries are retried.
import { createServer, type Server } from "node:http";
import { parseWebhookSecrets, verifyWebhook } from "../../lib/durable/auth/webhook";

export interface WebhookReceiver {
  url: string;
  /** Attempts by webhook-id: the statuses answered, in order. */
  attempts: Map<string, number[]>;
  /** Requests whose signature did not verify. */
  forged: number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(secret: string, random: () => number): Promise<WebhookReceiver> {
  const keys = parseWebhookSecrets(secret);
  const attempts = new Map<string, number[]>();
  const receiver = { attempts, forged: 0 } as WebhookReceiver;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers))
        if (typeof value === "string") headers.set(name, value);
      const verdict = verifyWebhook({ keys, headers, body: Buffer.concat(chunks) });
      if (!verdict.ok) {
        receiver.forged++;
        response.writeHead(401).end();
        return;
      }
      const seen = attempts.get(verdict.id) ?? [];
      // A quarter of first attempts fail: the delivery run must retry under the same webhook-id.
      const status = seen.length === 0 && random() < 0.25 ? 500 : 200;
      seen.push(status);
      attempts.set(verdict.id, seen);
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("the webhook receiver has no port");
  receiver.url = `http://127.0.0.1:${address.port}/hooks`;
  receiver.close = () => new Promise((resolve) => server.close(() => resolve()));
  return receiver;
}
