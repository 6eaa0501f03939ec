// The built app under `next start`, driven over real HTTP with no cron running: a run started by
// POST /api/durable/runs and a run woken by a signed webhook both complete, because the routes
// advance their run after answering. Once on PGlite (the default when DATABASE_URL is unset) and
// once on the real PostgreSQL server through Neon's driver, via a local WebSocket proxy.
// Prints the latencies of start → completed (3 steps) and signal → completed.
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { signGithub } from "@/lib/durable/auth/github-signature";
import { stripeSignatureHeader } from "@/lib/durable/auth/stripe-signature";
import { createTestDatabase } from "../helpers/databases";
import { startNeonProxy } from "../helpers/neon-proxy";
import { DurableClient, makeSecrets, median } from "./helpers/durable-client";
import { buildApp, startNext, type NextServer } from "./helpers/next-server";

const SAMPLES = 20;
// The events route's built-in sources exist once their variable is set (docs/guide/provider-webhooks.md).
const PROVIDER_ENV = { STRIPE_WEBHOOK_SECRET: "whsec_e2e_stripe_secret", GITHUB_WEBHOOK_SECRET: "e2e, github secret" };
// The approval workflow sleeps this long after its decision before it completes (app/workflows/approval.ts).
const COOL_OFF_MS = 5000;

const timings: string[] = [];
afterAll(() => {
  if (timings.length > 0) console.log(`\n[e2e http timings, median of ${SAMPLES}, no cron]\n${timings.join("\n")}\n`);
});

beforeAll(async () => {
  await buildApp();
}, 240_000);

interface Backend {
  name: string;
  /** Starts what the server needs and returns its environment; `cwd` is the server's working dir. */
  setup(cwd: string): Promise<Record<string, string | undefined>>;
  /** After the runs: prove the server really used this backend. */
  verify(cwd: string, completedHello: number): Promise<void>;
  teardown(): Promise<void>;
}

let proxy: Awaited<ReturnType<typeof startNeonProxy>> | undefined;
let neonUrl = "";

const backends: Backend[] = [
  {
    name: "PGlite (DATABASE_URL unset)",
    // Default: PGlite in ./.durable/pglite under the server's working directory, a temp dir here,
    // so the repository's own .durable/ (npm run dev) is never touched.
    setup: async () => ({ DATABASE_URL: undefined, DURABLE_DRIVER: undefined }),
    verify: async (cwd) => {
      expect(existsSync(path.join(cwd, ".durable", "pglite", "PG_VERSION"))).toBe(true);
    },
    teardown: async () => {},
  },
  {
    name: "PostgreSQL through Neon's driver",
    setup: async () => {
      neonUrl = await createTestDatabase("durable_e2e_neon");
      proxy = await startNeonProxy();
      return { DATABASE_URL: neonUrl, DURABLE_DRIVER: "neon", DURABLE_NEON_WS_PROXY: `127.0.0.1:${proxy.port}/v1` };
    },
    verify: async (_cwd, completedHello) => {
      // The server's queries went through the proxy (Neon's WebSocket protocol) into this database.
      expect(proxy!.connections).toBeGreaterThan(0);
      const client = new pg.Client({ connectionString: neonUrl });
      await client.connect();
      try {
        const { rows } = await client.query(
          `select count(*)::int as n from durable_runs where workflow = 'hello' and status = 'completed'`,
        );
        expect(rows[0].n).toBe(completedHello);
      } finally {
        await client.end();
      }
    },
    teardown: async () => {
      await proxy?.close();
      proxy = undefined;
    },
  },
];

for (const backend of backends) {
  describe(`next start on ${backend.name}`, () => {
    const secrets = makeSecrets();
    const cwd = mkdtempSync(path.join(os.tmpdir(), "durable-e2e-http-"));
    let server: NextServer | undefined;
    let client: DurableClient;
    let completedHello = 0;

    beforeAll(async () => {
      const env = await backend.setup(cwd);
      server = await startNext({ cwd, env: { ...secrets.env, ...PROVIDER_ENV, ...env } });
      client = new DurableClient(server.url, secrets.env.DURABLE_SECRET, secrets.signalKey);
      // The first request opens and migrates the database (PGlite's initdb takes seconds): here,
      // under the hook's timeout, rather than in the first test.
      const list = await fetch(`${server.url}/api/durable/runs`, {
        headers: { authorization: `Bearer ${secrets.env.DURABLE_SECRET}` },
      });
      expect(list.status, await list.clone().text()).toBe(200);
      expect(await list.json()).toMatchObject({ runs: [] });
    }, 120_000);

    afterEach((context) => {
      if (context.task.result?.state === "fail" && server)
        console.log(`next start output:\n${server.output().slice(-4000)}`);
    });

    afterAll(async () => {
      await server?.stop();
      await backend.teardown();
      rmSync(cwd, { recursive: true, force: true });
    });

    it("refuses a start without the admin bearer and an unknown workflow", async () => {
      const anonymous = await fetch(`${server!.url}/api/durable/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ workflow: "hello", input: {} }),
      });
      expect(anonymous.status).toBe(401);
      await expect(client.start("no-such-workflow", {})).rejects.toThrow(/→ 404/);
    });

    it(`completes ${SAMPLES} hello runs (3 steps) started over HTTP, with no cron`, async () => {
      const observed: number[] = [];
      const recorded: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const t0 = Date.now();
        const started = await client.start("hello", { name: `e2e-${i}` });
        expect(started).toMatchObject({ created: true, statusToken: expect.any(String) });
        const done = await client.waitFor(
          started.id,
          started.statusToken,
          (s) => s.status !== "pending" && s.status !== "running" && s.status !== "waiting",
        );
        observed.push(Date.now() - t0);
        // The completion as the server recorded it (same host, same clock): free of the polling interval.
        recorded.push(Date.parse(done.updatedAt) - t0);
        expect(done.status).toBe("completed");
        // `greeted` counts completed hello runs in the database, this one included: one per run, in order.
        expect(done.output).toMatchObject({ greeting: `Hello, e2e-${i}!`, greeted: i + 1 });
        expect(done.steps.map((s) => [s.id, s.kind, s.status])).toEqual([
          ["started-at", "value", "completed"],
          ["compose", "run", "completed"],
          ["count", "tx", "completed"],
        ]);
        completedHello++;
      }
      // The status token of one run opens no other run (the same 404 as an unknown id).
      const first = await client.start("hello", { name: "token" });
      const other = await client.start("hello", { name: "other" });
      expect((await client.status(other.id, first.statusToken)).http).toBe(404);
      await client.waitFor(first.id, first.statusToken, (s) => s.status === "completed");
      await client.waitFor(other.id, other.statusToken, (s) => s.status === "completed");
      completedHello += 2;

      timings.push(
        `${backend.name}: hello (3 steps) POST start → completed ${median(recorded).toFixed(0)} ms ` +
          "by the server's completion time, " +
          `${median(observed).toFixed(0)} ms until a status poll (every 10 ms) saw it`,
      );
    }, 90_000);

    it(`completes ${SAMPLES} approval runs from a signed webhook signal, with no cron`, async () => {
      // Start them all and let each park on its `decision` wait.
      const runs = [];
      for (let i = 0; i < SAMPLES; i++) runs.push(await client.start("approval", { docId: `doc-${i}` }));
      for (const run of runs) {
        const waiting = await client.waitFor(
          run.id,
          run.statusToken,
          (s) => s.status === "waiting" && s.waitingFor?.kind === "signal",
          { everyMs: 20 },
        );
        expect(waiting.waitingFor).toEqual({ kind: "signal", name: "decision" });
      }

      // Refusals change nothing: a wrong key and a tampered signature are 401, the run still waits.
      const victim = runs[0]!;
      const wrongKey = await client.signal(
        victim.id,
        "decision",
        { approved: true },
        { key: Buffer.from("not-the-signal-key-0123456789abc") },
      );
      expect(wrongKey.http).toBe(401);
      const unsigned = await client.signal(victim.id, "decision", { approved: true }, { signature: "v1,AAAA" });
      expect(unsigned.http).toBe(401);
      const stillWaiting = await client.status(victim.id, victim.statusToken);
      expect(stillWaiting.body).toMatchObject({ status: "waiting", waitingFor: { kind: "signal", name: "decision" } });

      // Signal them one after another, 200 ms apart (each then sleeps its 5 s cool-off in process),
      // and time each from sending its signal to seeing it completed.
      const results = await Promise.all(
        runs.map(async (run, i) => {
          await new Promise((resolve) => setTimeout(resolve, i * 200));
          const approved = i % 2 === 0;
          const t0 = Date.now();
          const sent = await client.signal(run.id, "decision", { approved, by: "e2e" });
          expect(sent.http).toBe(202);
          expect(sent.body).toEqual({ ok: true, signalled: true, alreadyDelivered: false });
          // Polled slowly (the load of 20 fast pollers would skew what is measured); the completion
          // time is the server's own.
          const done = await client.waitFor(
            run.id,
            run.statusToken,
            (s) => s.status === "completed" || s.status === "failed",
            { everyMs: 250 },
          );
          const elapsed = Date.parse(done.updatedAt) - t0;
          expect(done.status).toBe("completed");
          expect(done.output).toMatchObject({ docId: `doc-${i}`, approved, by: "e2e" });
          const decision = done.steps.find((s) => s.id === "decision");
          expect(decision).toMatchObject({ kind: "signal", status: "completed" });
          // The same delivery again is a repeat: 2xx, nothing delivered twice.
          const repeat = await client.signal(
            run.id,
            "decision",
            { approved: !approved },
            { deliveryId: sent.deliveryId },
          );
          expect(repeat.http).toBe(202);
          expect(repeat.body).toMatchObject({ signalled: false, alreadyDelivered: true });
          // A new delivery to a finished run is refused.
          expect((await client.signal(run.id, "decision", { approved })).http).toBe(409);
          return { elapsed, woken: Date.parse(decision!.completedAt!) - t0 };
        }),
      );
      const elapsed = results.map((r) => r.elapsed);
      for (const ms of elapsed) expect(ms).toBeGreaterThanOrEqual(COOL_OFF_MS - 50);
      timings.push(
        `${backend.name}: approval signal → completed ${median(elapsed).toFixed(0)} ms, ` +
          `of which ${COOL_OFF_MS} ms is the workflow's cool-off sleep ` +
          `(${(median(elapsed) - COOL_OFF_MS).toFixed(0)} ms beyond it); ` +
          `signal → wait answered (decision receipt) ${median(results.map((r) => r.woken)).toFixed(0)} ms`,
      );
    }, 120_000);

    it("publishes signed provider webhooks through the events route; refuses forged and oversized ones", async () => {
      const events = (source: string, body: string, headers: Record<string, string>) =>
        fetch(`${server!.url}/api/durable/events/${source}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body,
        });
      // Bytes a parser would rewrite (spacing, key order, an escaped slash): the signature is over these.
      const body = '{ "zen":"Keep it logically awesome.",  "hook":{"url":"https:\\/\\/example.com"}, "a":1 }';
      const delivery = randomUUID();
      const github = (signature: string, text = body) =>
        events("github", text, {
          "x-github-event": "ping",
          "x-github-delivery": delivery,
          "x-hub-signature-256": signature,
        });
      const first = await github(signGithub(PROVIDER_ENV.GITHUB_WEBHOOK_SECRET, body));
      expect(first.status, await first.clone().text()).toBe(200);
      const answer = await first.json();
      expect(answer).toEqual({ ok: true, event: "github.ping", eventId: delivery, runs: [] });
      expect(await (await github(signGithub(PROVIDER_ENV.GITHUB_WEBHOOK_SECRET, body))).json()).toEqual(answer);
      expect((await github(signGithub("another secret", body))).status).toBe(401);
      const stripeBody = JSON.stringify({ id: `evt_${delivery}`, object: "event", type: "customer.created" });
      const now = Math.floor(Date.now() / 1000);
      const stripe = await events("stripe", stripeBody, {
        "stripe-signature": stripeSignatureHeader(PROVIDER_ENV.STRIPE_WEBHOOK_SECRET, now, stripeBody),
      });
      expect(await stripe.json()).toEqual({
        ok: true,
        event: "stripe.customer.created",
        eventId: `evt_${delivery}`,
        runs: [],
      });
      const big = `{"pad":"${"x".repeat(256 * 1024)}"}`;
      expect((await github(signGithub(PROVIDER_ENV.GITHUB_WEBHOOK_SECRET, big), big)).status).toBe(413);
      expect((await events("nope", "{}", {})).status).toBe(404);
    });

    it("used the backend it was given", async () => {
      await backend.verify(cwd, completedHello);
    });
  });
}
