// POST /api/durable/events/{source} on the real server: a provider that delivers the same event
// many times at once (its retries overlapping, two app instances answering) gets the same 200 from
// every delivery, and one event and one run per subscriber are stored
// (docs/guide/provider-webhooks.md, "The route").
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { stripeSignatureHeader } from "@/lib/durable/auth/stripe-signature";
import { createDurableRoutes, type DurableRoutes, stripeSource } from "@/lib/durable/next";
import { createTestDatabase } from "../helpers/databases";

const SECRET = "whsec_events_route_racing";
const INSTANCES = 3;
const DELIVERIES = 12;

const workflows = ["ledger", "email"].map((name) =>
  defineWorkflow({
    name,
    on: "stripe.charge.succeeded",
    input: z.object({ id: z.string() }),
    run: async (ctx, event) => ctx.step.value("seen", () => `${name} ${event.id}`),
  }),
);

let dbs: Kysely<any>[] = [];
let instances: Durable[] = [];
let routes: DurableRoutes[] = [];

beforeAll(async () => {
  const url = await createTestDatabase("durable_events_route");
  for (let i = 0; i < INSTANCES; i++) {
    const db = await connect(url, { driver: "pg", poolSize: 3 });
    const durable = createDurable({ db, workflows, secrets: { durable: "t" }, log: () => {} });
    dbs.push(db);
    instances.push(durable);
    routes.push(
      createDurableRoutes(async () => durable, {
        log: () => {},
        secrets: { durable: "t", cron: "c" },
        eventSources: { stripe: stripeSource({ secret: SECRET }) },
      }),
    );
  }
  await instances[0]!.migrate();
});
afterAll(async () => {
  for (const durable of instances) await durable.close();
  dbs = [];
  instances = [];
  routes = [];
});

it("overlapping deliveries of one Stripe event: one answer to each, one event, one run per subscriber", async () => {
  for (let round = 0; round < 5; round++) {
    const id = `evt_race_${round}`;
    const body = JSON.stringify({
      id,
      object: "event",
      type: "charge.succeeded",
      data: { object: { id: `ch_${round}` } },
    });
    const now = Math.floor(Date.now() / 1000);
    const answers = await Promise.all(
      Array.from({ length: DELIVERIES }, async (_, n) => {
        const request = new Request("http://localhost/api/durable/events/stripe", {
          method: "POST",
          headers: { "stripe-signature": stripeSignatureHeader(SECRET, now - n, body) },
          body,
        });
        const response = await routes[n % INSTANCES]!.events.POST(request, {
          params: Promise.resolve({ source: "stripe" }),
        });
        return { status: response.status, body: await response.json() };
      }),
    );
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]!.status).toBe(200);
    expect(answers[0]!.body.runs.map((run: { workflow: string }) => run.workflow).sort()).toEqual(["email", "ledger"]);
    const runIds: string[] = answers[0]!.body.runs.map((run: { id: string }) => run.id);
    const counts = await sql<{ events: number; runs: number }>`
      select (select count(*)::int from durable_app_events where id = ${id}) as events,
             (select count(*)::int from durable_runs where id in (${sql.join(runIds)})) as runs`.execute(dbs[0]!);
    expect(counts.rows[0]).toEqual({ events: 1, runs: 2 });
  }
  for (const route of routes) await route.idle();
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from durable_runs where status = 'completed'`.execute(dbs[0]!);
  expect(rows[0]!.n).toBe(10);
});
