// Outbound webhooks (docs/guide/lifecycle.md, "Webhooks"), on every database: each delivery a run
// of durable.webhook started in the transaction that ends the run, POSTed to a real HTTP receiver
// here that checks the Standard Webhooks signature (computed here from the spec, and with
// auth/webhook.ts's verifier), retried on a non-2xx answer, failed ("dead") after its attempts.
import { createHmac, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, defineWorkflow, type Durable, type DurableOptions, type WebhookEndpoint } from "@/lib/durable";
import { verifyWebhook } from "@/lib/durable/auth/webhook";
import { resetDurableTables } from "../helpers/databases";
import { scanForPlaintext } from "../helpers/plaintext-scan";

const KEY = randomBytes(32);
const SECRET = `whsec_${KEY.toString("base64")}`;
const MARK = `OUTmark${randomBytes(6).toString("hex")}`;

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The signature as the spec computes it, checked by hand and by verifyWebhook. */
  verified: boolean;
}

/** A receiver: /ok answers 200, /flaky 500 once per webhook-id then 200, /down always 500. */
async function startReceiver(): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const failedOnce = new Set<string>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
      const id = headers["webhook-id"] ?? "";
      const expected = createHmac("sha256", KEY)
        .update(`${id}.${headers["webhook-timestamp"]}.${body}`)
        .digest("base64");
      const byHand = (headers["webhook-signature"] ?? "").split(" ").includes(`v1,${expected}`);
      const byVerifier = verifyWebhook({ keys: [KEY], headers: new Headers(headers), body }).ok;
      received.push({ path: request.url ?? "", headers, body, verified: byHand && byVerifier });
      const fail = request.url === "/down" || (request.url === "/flaky" && !failedOnce.has(id));
      if (request.url === "/flaky") failedOnce.add(id);
      response.writeHead(fail ? 500 : 200).end(fail ? "no" : "ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

const order = defineWorkflow({
  name: "order",
  input: z.object({ fail: z.boolean().default(false), wait: z.boolean().default(false) }),
  async run(ctx, input) {
    if (input.wait) await ctx.step.waitForSignal("go");
    if (input.fail) throw new Error(`order failed ${MARK}`);
    return { total: 42, note: MARK };
  },
});

export function runWebhooksContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`outbound webhooks on ${label}`, () => {
    let db: Kysely<any>;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    const instances: Durable[] = [];
    const make = (webhooks: WebhookEndpoint[], extra: Partial<DurableOptions> = {}) => {
      const durable = createDurable({
        db,
        workflows: [order],
        webhooks,
        defaults: { lease: "2s" },
        log: () => {},
        ...extra,
      });
      instances.push(durable);
      return durable;
    };
    const endpoint = (path: string, events: WebhookEndpoint["events"], more: Partial<WebhookEndpoint> = {}) => ({
      url: `${receiver.url}${path}`,
      events,
      secret: SECRET,
      retryDelay: "1s",
      ...more,
    });
    const drain = async (durable: Durable) => {
      for (let i = 0; i < 30 && (await durable.countDue()) > 0; i++) await durable.tick({ budgetMs: 40_000 });
    };
    const deliveries = async (parent: string) =>
      (
        await sql<any>`select id, status, input, error from durable_runs
                        where parent_id = ${parent} and workflow = 'durable.webhook' order by id`.execute(db)
      ).rows;

    beforeAll(async () => {
      db = await open();
      receiver = await startReceiver();
      await make([]).migrate();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
      receiver.received.length = 0;
    });
    afterAll(async () => {
      receiver?.server.close();
      await instances[0]?.close();
    });

    it("a completion is POSTed once, signed, with its delivery run's id as webhook-id (a child run)", async () => {
      const durable = make([endpoint("/ok", ["run.completed", "run.failed"])]);
      await durable.start(order, {}, { id: "o1" });
      await drain(durable);
      const [delivery, ...others] = await deliveries("o1");
      expect(others).toEqual([]);
      expect(delivery).toMatchObject({ id: "o1~completed~1~1", status: "completed" });
      expect(receiver.received).toHaveLength(1);
      const [got] = receiver.received;
      expect(got).toMatchObject({ path: "/ok", verified: true });
      expect(got!.headers["webhook-id"]).toBe(delivery.id);
      expect(got!.headers["content-type"]).toBe("application/json");
      const body = JSON.parse(got!.body);
      expect(body).toEqual({
        type: "run.completed",
        timestamp: expect.any(String),
        data: { id: "o1", workflow: "order", status: "completed", output: { total: 42, note: MARK } },
      });
      expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
    });

    it("events choose what is sent: a failure to a failures-only endpoint, run.waiting only when asked", async () => {
      const durable = make([endpoint("/ok", ["run.failed"]), endpoint("/ok?waits", ["run.waiting"])]);
      await durable.start(order, {}, { id: "fine" });
      await durable.start(order, { fail: true }, { id: "broke" });
      await durable.start(order, { wait: true }, { id: "waits" });
      await drain(durable);
      expect(await deliveries("fine")).toEqual([]);
      const sent = receiver.received.map((r) => [r.path, JSON.parse(r.body).type, JSON.parse(r.body).data.id]);
      expect(sent.sort()).toEqual([
        ["/ok", "run.failed", "broke"],
        ["/ok?waits", "run.waiting", "waits"],
      ]);
      const failure = JSON.parse(receiver.received.find((r) => r.path === "/ok")!.body);
      expect(failure.data.error).toMatchObject({ message: `order failed ${MARK}` });
      expect(receiver.received.every((r) => r.verified)).toBe(true);
    });

    it("a receiver answering 500 then 200 gets the same webhook-id twice; the delivery completes", async () => {
      const durable = make([endpoint("/flaky", ["run.completed"], { attempts: 3 })]);
      await durable.start(order, {}, { id: "o2" });
      await drain(durable);
      const [delivery] = await deliveries("o2");
      expect(delivery).toMatchObject({ status: "completed" });
      expect(receiver.received.map((r) => r.headers["webhook-id"])).toEqual([delivery.id, delivery.id]);
      expect(receiver.received.every((r) => r.verified)).toBe(true);
      expect((await durable.status(delivery.id))?.steps).toMatchObject([{ id: "deliver", attempt: 2 }]);
    });

    it("a receiver always failing: the delivery run fails (dead) after its attempts, naming the answer", async () => {
      const durable = make([endpoint("/down", ["run.completed"], { attempts: 2 })]);
      await durable.start(order, {}, { id: "o3" });
      await drain(durable);
      const [delivery] = await deliveries("o3");
      expect(delivery.status).toBe("failed");
      expect((await durable.status(delivery.id))?.error?.message).toMatch(/answered 500/);
      expect(receiver.received).toHaveLength(2);
      // The run it reports is untouched by its delivery's failure.
      expect(await durable.status("o3")).toMatchObject({ status: "completed" });
    });

    it("a url no longer configured fails its delivery with a clear error, sending nothing", async () => {
      const before = make([endpoint("/ok", ["run.completed"])]);
      await before.start(order, {}, { id: "o4" });
      // The run ends under the first configuration; a deploy that dropped the url delivers.
      await before.advance("o4");
      const after = make([endpoint("/other", ["run.completed"])]);
      await drain(after);
      const [delivery] = await deliveries("o4");
      expect(delivery.status).toBe("failed");
      expect((await after.status(delivery.id))?.error?.message).toMatch(
        /is not in this instance's webhooks any more: its secret is unknown/,
      );
      expect(receiver.received).toEqual([]);
    });

    it("with encryption, the receiver gets plain values and the database holds none", async () => {
      const key = { id: "k1", secret: randomBytes(32).toString("base64") };
      const durable = make([endpoint("/ok", ["run.completed", "run.failed"])], { encryption: { keys: [key] } });
      await durable.start(order, {}, { id: "e1" });
      await durable.start(order, { fail: true }, { id: "e2" });
      await drain(durable);
      expect(receiver.received).toHaveLength(2);
      for (const got of receiver.received) expect(got.body).toContain(MARK);
      expect(await scanForPlaintext(db, [MARK])).toEqual([]);
      // The scan can fail: without encryption the same runs leave the marker in the rows.
      await resetDurableTables(db);
      const plain = make([endpoint("/ok", ["run.completed"])]);
      await plain.start(order, {}, { id: "p1" });
      await drain(plain);
      expect((await scanForPlaintext(db, [MARK])).length).toBeGreaterThan(0);
    });

    it("refuses to start the delivery workflow: only a run's end starts one, in the database", async () => {
      const durable = make([endpoint("/ok", ["run.completed"])]);
      const delivery = durable.workflows.get("durable.webhook")!;
      const forged = { url: `${receiver.url}/ok`, type: "run.completed", timestamp: "now", data: {} };
      await expect(durable.start(delivery, forged)).rejects.toThrow(/is started only when a run ends/);
      await expect(durable.startMany(delivery, [forged])).rejects.toThrow(/is started only when a run ends/);
      expect(Number((await sql<any>`select count(*) as n from durable_runs`.execute(db)).rows[0].n)).toBe(0);
    });

    it("refuses a bad webhooks configuration with a clear error", () => {
      const bad = (webhooks: unknown) => () => createDurable({ db, workflows: [], webhooks: webhooks as never });
      expect(bad({})).toThrow(/webhooks is an array/);
      expect(bad([{ url: "ftp://x", events: ["run.failed"], secret: SECRET }])).toThrow(/url is an http\(s\) URL/);
      expect(bad([{ url: "not a url", events: ["run.failed"], secret: SECRET }])).toThrow(/url is an http\(s\) URL/);
      expect(bad([{ url: "https://a.example", events: ["run.done"], secret: SECRET }])).toThrow(
        /"run.done" is not one of run.completed, run.failed, run.cancelled, run.waiting/,
      );
      expect(bad([{ url: "https://a.example", events: [], secret: SECRET }])).toThrow(/lists at least one/);
      expect(bad([{ url: "https://a.example", events: ["run.failed"] }])).toThrow(/secret is "whsec_"/);
      expect(bad([{ url: "https://a.example", events: ["run.failed"], secret: "whsec_c2hvcnQ=" }])).toThrow(
        /shorter than 24 bytes/,
      );
      const ok = { url: "https://a.example", events: ["run.failed"], secret: SECRET };
      expect(bad([ok, ok])).toThrow(/listed twice/);
      expect(bad([{ ...ok, attempts: 0 }])).toThrow(/attempts is a whole number from 1 to 50/);
      expect(bad([{ ...ok, retryDelay: "7h" }])).toThrow(/retryDelay is at most 6 hours/);
    });
  });
}
