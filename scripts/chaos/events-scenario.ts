// Chaos scenario 14 (docs/invariants.md): events in and out under a nemesis. Orders are published
// (racing publishers with one id, repeated deliveries, app transactions rolled back), waiters wait
// for their order's payment event, and every run's end starts a lifecycle run and a webhook
// delivery to a receiver that fails a quarter of first attempts; workers are killed and frozen,
// and kill themselves around suspensions and ends. EV1–EV5 are checked beside I1–I10.
import { randomBytes } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { connect, createDurable, type Durable } from "../../lib/durable";
import type { FailpointName } from "../../lib/durable/engine/run/failpoints";
import { drain } from "./drain";
import { createChaosDatabase } from "./harness-db";
import { type InvariantResult, invariantResult as result, n as count, rows } from "./invariants";
import { nemesis } from "./nemesis";
import { seeded } from "./random";
import { events, ready, type Scale, type ScenarioResult, sleep } from "./scenario-support";
import { until } from "./scenario-waits";
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver";
import { chaosExpectation, chaosWaiter, chaosWebhooks, chaosWorkflows } from "./workflow";
import { spawnWorker, type Worker } from "./workers";

/** Where scenario 14's workers kill themselves: around a claim, a suspension and a run's end. */
const EVENT_FAILPOINTS: FailpointName[] = [
  "claim.after",
  "suspend.before",
  "suspend.after",
  "run.after-body",
  "finish.before",
  "finish.after",
];

const SUBSCRIBERS = ["chaos-on-order", "chaos-on-vip"];
const HOOKED = [...SUBSCRIBERS, "chaos-waiter"];

/** What the harness published: the committed orders' numbers, and those of rolled-back ones. */
interface Published {
  committed: number[];
  rolledBack: number[];
  redelivered: number;
  raced: number;
}

class RollBack extends Error {}

export async function eventsInAndOut(scale: Scale): Promise<ScenarioResult> {
  const orders = scale.full ? 300 : 60;
  const waiters = scale.full ? 80 : 20;
  const workerCount = scale.full ? 8 : 4;
  const durationMs = scale.full ? 40_000 : 12_000;
  const random = seeded(scale.seed + 14);
  return withWebhookReceiver(scale, async (receiver) => {
    const { url, db } = await createChaosDatabase("durable_chaos_events");
    const publishers = await Promise.all([publisher(url), publisher(url)]);
    const everyWorker: Worker[] = [];
    const spawn = () => {
      const worker = spawnWorker(url, {
        IDLE_EXIT_MS: String(durationMs + 5_000),
        KILL_RATE: "0.03",
        KILL_POINTS: EVENT_FAILPOINTS.join(","),
        SEED: String(scale.seed + 1_400 + everyWorker.length),
      });
      everyWorker.push(worker);
      return worker;
    };
    const workers: Worker[] = Array.from({ length: workerCount }, spawn);
    await until(() => workers.every(ready));
    const waiterIds = Array.from({ length: waiters }, (_, i) => `waiter-${String(i).padStart(4, "0")}`);
    await publishers[0]!.startMany(
      chaosWaiter,
      waiterIds.map((_, n) => ({ n })),
      { ids: waiterIds },
    );
    const storm = await eventStorm(db, { orders, waiters, durationMs, random, workers, spawn, publishers });
    await sleep(6_000); // every paused worker has resumed
    for (const w of workers) w.child.kill("SIGKILL");
    await Promise.all(workers.map((w) => w.exited));
    const problems = await drain(url, db);
    await Promise.all(publishers.map((p) => p.close()));
    const killedAt = (point: RegExp) => everyWorker.filter((w) => point.test(w.output())).length;
    const deliveries = [...receiver.attempts.values()];
    return {
      id: "14",
      name:
        `${orders} orders published to 2 subscribers, ${waiters} waiters, hooks and webhooks, ` +
        `${workerCount} workers killed and paused`,
      db,
      problems,
      expectation: {
        ...chaosExpectation,
        stepsPerWorkflow: { "chaos-ended": 1, "chaos-waiter": 1, "durable.webhook": 1 },
        // A delivery's step retries while the receiver answers 500.
        retries: 4,
      },
      invariants: (db) => checkEventInvariants(db, storm.published, receiver),
      counts: {
        "orders committed": storm.published.committed.length,
        "orders rolled back": storm.published.rolledBack.length,
        "publishes raced with one id": storm.published.raced,
        "publishes repeated later": storm.published.redelivered,
        "payments published": waiters,
        kills: storm.kills,
        pauses: storm.pauses,
        "killed at a failpoint": killedAt(/FAILPOINT /),
        "webhook deliveries received": deliveries.length,
        "of them retried": deliveries.filter((a) => a.length > 1).length,
        heals: await events(db, ["heal"]),
        "late writes refused": await events(db, ["fence.rejected", "step.outcome-conflict"]),
      },
    };
  });
}

/**
 * Runs `scenario` with a webhook receiver listening and CHAOS_WEBHOOK_URL and CHAOS_WEBHOOK_SECRET
 * set: the harness's instances read them here, and spawnWorker passes process.env on to the workers.
 */
async function withWebhookReceiver<T>(scale: Scale, scenario: (receiver: WebhookReceiver) => Promise<T>): Promise<T> {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  const receiver = await startWebhookReceiver(secret, seeded(scale.seed + 1_400));
  const before = {
    CHAOS_WEBHOOK_URL: process.env.CHAOS_WEBHOOK_URL,
    CHAOS_WEBHOOK_SECRET: process.env.CHAOS_WEBHOOK_SECRET,
  };
  process.env.CHAOS_WEBHOOK_URL = receiver.url;
  process.env.CHAOS_WEBHOOK_SECRET = secret;
  try {
    return await scenario(receiver);
  } finally {
    await receiver.close();
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** An instance of the harness that publishes: its own pool, as each deployment's function has. */
async function publisher(url: string): Promise<Durable> {
  return createDurable({
    db: await connect(url, { driver: "pg", poolSize: 4 }),
    workflows: chaosWorkflows,
    webhooks: chaosWebhooks(),
    secrets: { durable: "chaos" },
    log: () => {},
  });
}

/**
 * Scenario 14's storm: orders published in 8 waves, each by both publishers at once under one id
 * (one in seven instead inside an app transaction that rolls back; one in five published again
 * later), the waiters' payments published in the second half (with a decoy for another order),
 * a nemesis move every 0.3–0.8 s, and workers that killed themselves at a failpoint replaced.
 */
async function eventStorm(
  db: Kysely<any>,
  o: {
    orders: number;
    waiters: number;
    durationMs: number;
    random: () => number;
    workers: Worker[];
    spawn: () => Worker;
    publishers: Durable[];
  },
): Promise<{ published: Published; kills: number; pauses: number }> {
  const [a, b] = o.publishers as [Durable, Durable];
  const published: Published = { committed: [], rolledBack: [], redelivered: 0, raced: 0 };
  let kills = 0;
  let pauses = 0;
  let sent = 0;
  let paid = 0;
  const start = performance.now();
  for (let elapsed = 0; sent < o.orders || paid < o.waiters || elapsed < o.durationMs; ) {
    const due = Math.min(o.orders, Math.ceil((elapsed / o.durationMs) * 8) * (o.orders / 8));
    for (; sent < due; sent++) await publishOrder(db, a, b, sent, o.random, published);
    const paymentsDue =
      elapsed < o.durationMs / 2 ? 0 : Math.min(o.waiters, Math.ceil(((elapsed * 2) / o.durationMs - 1) * o.waiters));
    for (; paid < paymentsDue; paid++) {
      await (o.random() < 0.5 ? a : b).publish("chaos.paid", { n: paid }, { id: `paid-${paid}` });
      await a.publish("chaos.paid", { n: paid + 100_000 }, { id: `decoy-${paid}` });
    }
    await sleep(300 + o.random() * 500);
    const move = nemesis(o.workers, o.random, o.spawn);
    if (move === "kill") kills++;
    if (move === "pause") pauses++;
    o.workers.forEach(({ child }, i) => {
      if (child.exitCode !== null || child.signalCode !== null) o.workers[i] = o.spawn(); // killed at a failpoint
    });
    elapsed = performance.now() - start;
  }
  return { published, kills, pauses };
}

async function publishOrder(
  db: Kysely<any>,
  a: Durable,
  b: Durable,
  n: number,
  random: () => number,
  published: Published,
): Promise<void> {
  const id = `order-${String(n).padStart(5, "0")}`;
  const data = { n, vip: n % 3 === 0, work: [Math.floor(random() * 150), Math.floor(random() * 60)] };
  if (n % 7 === 3) {
    // The app's write fails after the publish: the event and its runs roll back with it.
    await db
      .transaction()
      .execute(async (tx) => {
        await a.publish("chaos.order", data, { id, tx });
        throw new RollBack();
      })
      .catch((error) => {
        if (!(error instanceof RollBack)) throw error;
      });
    published.rolledBack.push(n);
    return;
  }
  const [first, second] = await Promise.all([
    a.publish("chaos.order", data, { id }),
    b.publish("chaos.order", data, { id }),
  ]);
  published.raced++;
  if (JSON.stringify(first.runs) !== JSON.stringify(second.runs)) {
    throw new Error(`publishes of ${id} answered different runs: ${JSON.stringify([first, second])}`);
  }
  if (n % 5 === 1) {
    await b.publish("chaos.order", data, { id });
    published.redelivered++;
  }
  published.committed.push(n);
}

/** EV1–EV5 (docs/invariants.md). */
async function checkEventInvariants(
  db: Kysely<any>,
  published: Published,
  receiver: WebhookReceiver,
): Promise<InvariantResult[]> {
  return [
    await eachEventStartsEachSubscriberOnce(db, published),
    await nothingForARollback(db, published),
    await oneLifecycleRunPerEnd(db),
    await everyEndDelivered(db, receiver),
    await everyWaiterPaid(db),
  ];
}

/** EV1: every committed order is stored once and started each subscriber it matches exactly once. */
async function eachEventStartsEachSubscriberOnce(db: Kysely<any>, published: Published): Promise<InvariantResult> {
  const committed = JSON.stringify(published.committed);
  const subscribers = JSON.stringify(SUBSCRIBERS);
  const found = await rows(
    db,
    sql`
    with expected as (select n::int from jsonb_array_elements_text(${committed}::jsonb) n),
         stored as (select (data ->> 'n')::int as n, (data ->> 'vip')::boolean as vip
                      from durable_app_events where name = 'chaos.order'),
         wanted as (select n, 'chaos-on-order' as workflow from stored
                    union all select n, 'chaos-on-vip' from stored where vip)
    select 'event not stored' as problem, e.n, null as workflow, 0 as runs
      from expected e where not exists (select 1 from stored s where s.n = e.n)
    union all
    select 'event stored twice', n, null, count(*)::int from stored group by n having count(*) > 1
    union all
    select 'subscriber runs', w.n, w.workflow, count(r.id)::int
      from wanted w left join durable_runs r on r.workflow = w.workflow and (r.input ->> 'n')::int = w.n
     group by 1, 2, 3 having count(r.id) <> 1
    union all
    select 'run without its event', (r.input ->> 'n')::int, r.workflow, 1 from durable_runs r
     where r.workflow in (select jsonb_array_elements_text(${subscribers}::jsonb))
       and not exists (select 1 from wanted w where w.workflow = r.workflow and w.n = (r.input ->> 'n')::int)
    union all
    select 'run inserted twice', null, i.run_id, count(*)::int from chaos_inserts i
     where i.run_id in (select id from durable_runs
                         where workflow in (select jsonb_array_elements_text(${subscribers}::jsonb)))
     group by i.run_id having count(*) <> 1`,
  );
  return result("EV1", "every committed event started each subscriber once", published.committed.length, found);
}

/** EV2: an order published in a transaction that rolled back left no event and started nothing. */
async function nothingForARollback(db: Kysely<any>, published: Published): Promise<InvariantResult> {
  const rolledBack = JSON.stringify(published.rolledBack);
  const found = await rows(
    db,
    sql`
    with rolled as (select n::int from jsonb_array_elements_text(${rolledBack}::jsonb) n)
    select 'event' as left_behind, id from durable_app_events
     where name = 'chaos.order' and (data ->> 'n')::int in (select n from rolled)
    union all
    select 'run', id from durable_runs where input ? 'vip' and (input ->> 'n')::int in (select n from rolled)`,
  );
  return result("EV2", "nothing started for a transaction that rolled back", published.rolledBack.length, found);
}

/** EV3: every ended run with hooks has exactly one lifecycle run, a child with the end's status. */
async function oneLifecycleRunPerEnd(db: Kysely<any>): Promise<InvariantResult> {
  const hooked = JSON.stringify(HOOKED);
  const found = await rows(
    db,
    sql`
    select r.id, r.status, count(l.id)::int as lifecycle_runs,
           count(l.id) filter (where l.input ->> 'status' = r.status and l.input ->> 'id' = r.id)::int as matching
      from durable_runs r
      left join durable_runs l on l.parent_id = r.id and l.workflow = 'chaos-ended'
     where r.workflow in (select jsonb_array_elements_text(${hooked}::jsonb))
       and r.status in ('completed', 'failed', 'cancelled')
     group by r.id, r.status having count(l.id) <> 1 or count(l.id) filter (where l.input ->> 'status' = r.status) <> 1
    union all
    select l.id, 'orphan lifecycle run', 0, 0 from durable_runs l
     where l.workflow = 'chaos-ended'
       and not exists (select 1 from durable_runs r
                        where r.id = l.parent_id and r.status in ('completed', 'failed', 'cancelled'))`,
  );
  const checked = await count(
    db,
    sql`select count(*) as n from durable_runs where workflow in (select jsonb_array_elements_text(${hooked}::jsonb))`,
  );
  return result("EV3", "every ended run has exactly one lifecycle run", checked, found);
}

/**
 * EV4: every ended run (but a lifecycle run or a delivery, which have no hooks) has exactly one
 * delivery run to the webhook, which reached the receiver at least once, with a valid signature, and
 * completed only after an answer of 200.
 */
async function everyEndDelivered(db: Kysely<any>, receiver: WebhookReceiver): Promise<InvariantResult> {
  const found = await rows(
    db,
    sql`
    select r.id, r.status, count(d.id)::int as deliveries from durable_runs r
      left join durable_runs d on d.parent_id = r.id and d.workflow = 'durable.webhook'
     where r.status in ('completed', 'failed', 'cancelled') and r.workflow not in ('durable.webhook', 'chaos-ended')
     group by r.id, r.status having count(d.id) <> 1`,
  );
  const deliveries = await rows(db, sql`select id, status from durable_runs where workflow = 'durable.webhook'`);
  for (const delivery of deliveries) {
    const attempts = receiver.attempts.get(delivery.id) ?? [];
    if (attempts.length === 0) found.push({ delivery: delivery.id, problem: "never reached the receiver" });
    else if (delivery.status === "completed" && attempts.at(-1) !== 200) {
      found.push({ delivery: delivery.id, problem: `completed after answers ${attempts.join(",")}` });
    } else if (delivery.status !== "completed") {
      found.push({ delivery: delivery.id, problem: `ended ${delivery.status} after answers ${attempts.join(",")}` });
    }
  }
  if (receiver.forged > 0) found.push({ problem: `${receiver.forged} requests with a bad signature` });
  return result("EV4", "every ended run delivered to the webhook at least once", deliveries.length, found);
}

/** EV5: every waiter completed with its own order's payment (published after it started). */
async function everyWaiterPaid(db: Kysely<any>): Promise<InvariantResult> {
  const found = await rows(
    db,
    sql`
    select id, status, output from durable_runs
     where workflow = 'chaos-waiter'
       and (status <> 'completed' or (output -> 'paid' ->> 'n') is distinct from (input ->> 'n'))`,
  );
  const checked = await count(db, sql`select count(*) as n from durable_runs where workflow = 'chaos-waiter'`);
  return result("EV5", "every waiter got its own order's event", checked, found);
}
