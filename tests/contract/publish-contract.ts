// durable.publish and defineWorkflow({ on }) (docs/guide/events.md), on every database: one run
// per subscribed workflow in the publish's one statement, ids derived from the event id and the
// workflow, a repeated id that starts nothing, refusals that write nothing, and the app's own
// transaction (Kysely and Drizzle) committing or rolling back the event with its writes.
import { sql as drizzleSql } from "drizzle-orm";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, defineWorkflow, type Durable, InvalidInputError, RunStateConflictError } from "@/lib/durable";
import "@/lib/durable/drizzle";
import { resetDurableTables } from "../helpers/databases";
import type { TestDrizzle } from "./drizzle-fixtures";

const order = z.object({ orderId: z.string(), total: z.number(), region: z.string().optional() });

const receipt = defineWorkflow({
  name: "send-receipt",
  on: "order.created",
  input: order,
  deadline: "1h",
  run: async (ctx, input) => ({ sent: input.orderId, by: ctx.runId }),
});
const euOnly = defineWorkflow({
  name: "eu-vat",
  on: { event: "order.created", match: { region: "eu" } },
  input: order,
  run: async (_ctx, input) => ({ vat: input.total * 0.2 }),
});
const other = defineWorkflow({
  name: "on-refund",
  on: "order.refunded",
  input: z.unknown(),
  run: async () => "refunded",
});
const unsubscribed = defineWorkflow({ name: "plain", input: z.unknown(), run: async () => "plain" });
// A schema stricter than the others': a publish whose data it refuses writes nothing at all.
const strict = defineWorkflow({
  name: "strict-audit",
  on: "audit.entry",
  input: z.object({ actor: z.string().min(1) }),
  run: async () => "audited",
});
const loose = defineWorkflow({ name: "loose-audit", on: "audit.entry", input: z.unknown(), run: async () => "ok" });
const perCustomer = defineWorkflow({
  name: "per-customer",
  on: "customer.synced",
  input: z.object({ customer: z.string() }),
  singleton: { key: (input: { customer: string }) => input.customer },
  async run(ctx) {
    await ctx.step.waitForSignal("done");
    return "synced";
  },
});
const slashed = defineWorkflow({
  name: "billing/charge",
  on: "order.refunded",
  input: z.unknown(),
  run: async () => 1,
});

/** The instance the emitting workflow publishes through (set by the suite). */
let current: Durable | undefined;
// Publishes from a tx step, in the step's transaction: the event commits once, with the receipt.
const emitter = defineWorkflow({
  name: "emitter",
  input: z.object({ orderId: z.string() }),
  run: (ctx, input) =>
    ctx.step.tx("emit", (tx) =>
      current!.publish("order.created", { orderId: input.orderId, total: 3 }, { id: `emitted-${ctx.runId}`, tx }),
    ),
});

const workflows = [receipt, euOnly, other, unsubscribed, strict, loose, perCustomer, slashed, emitter];

export interface PublishSide {
  db: Kysely<any>;
  /** A Drizzle db on the same database (on PGlite: on the store's one session). */
  drizzle: TestDrizzle;
  close(): Promise<void>;
}

export function runPublishContract(label: string, open: () => Promise<PublishSide>) {
  describe(`publish on ${label}`, () => {
    let side: PublishSide;
    let durable: Durable;
    const drain = async () => {
      for (let i = 0; i < 20 && (await durable.countDue()) > 0; i++) await durable.tick({ budgetMs: 10_000 });
    };
    const counts = async () =>
      (
        await sql<{ events: number; runs: number }>`
          select (select count(*)::int from durable_app_events) as events,
                 (select count(*)::int from durable_runs) as runs`.execute(side.db)
      ).rows[0]!;

    beforeAll(async () => {
      side = await open();
      durable = createDurable({
        db: side.db,
        workflows,
        secrets: { durable: "t" },
        defaults: { lease: "2s" },
        log: () => {},
      });
      current = durable;
      await durable.migrate();
      await sql`create table if not exists app_orders (id text primary key)`.execute(side.db);
    });
    beforeEach(async () => {
      await resetDurableTables(side.db);
      await sql`truncate app_orders`.execute(side.db);
    });
    afterAll(async () => {
      current = undefined;
      await durable?.close();
      await side?.close();
    });

    it("starts one run of each subscribed workflow, by name and match, with the data as input", async () => {
      const data = { orderId: "o-1", total: 10, region: "eu" };
      const published = await durable.publish("order.created", data, { id: "evt-1" });
      expect(published).toEqual({
        eventId: "evt-1",
        runs: [
          { workflow: "eu-vat", id: "event:eu-vat/evt-1" },
          { workflow: "send-receipt", id: "event:send-receipt/evt-1" },
        ],
      });
      const us = await durable.publish("order.created", { orderId: "o-2", total: 5, region: "us" }, { id: "evt-2" });
      expect(us.runs).toEqual([{ workflow: "send-receipt", id: "event:send-receipt/evt-2" }]);
      await drain();
      expect(await durable.status("event:send-receipt/evt-1")).toMatchObject({
        status: "completed",
        output: { sent: "o-1", by: "event:send-receipt/evt-1" },
      });
      const input = await sql<any>`select input from durable_runs where id = 'event:send-receipt/evt-1'`.execute(
        side.db,
      );
      expect(input.rows).toEqual([{ input: data }]);
      expect(await durable.status("event:eu-vat/evt-1")).toMatchObject({ status: "completed", output: { vat: 2 } });
      // The workflow's own deadline holds on a run an event started, as on one start() started.
      const deadline = await sql<{ s: number }>`
        select extract(epoch from deadline_at - created_at)::int as s from durable_runs
         where id = 'event:send-receipt/evt-2'`.execute(side.db);
      expect(deadline.rows).toEqual([{ s: 3600 }]);
      expect(await counts()).toEqual({ events: 2, runs: 3 });
    });

    it("an event no workflow subscribes to is stored, starts nothing; a default id is a new uuid", async () => {
      const published = await durable.publish("nobody.listens", { x: 1 });
      expect(published.runs).toEqual([]);
      expect(published.eventId).toMatch(/^[0-9a-f-]{36}$/);
      const stored = await sql<any>`select name, data, source from durable_app_events`.execute(side.db);
      expect(stored.rows).toEqual([{ name: "nobody.listens", data: { x: 1 }, source: null }]);
    });

    it("a repeated id starts nothing, answers the runs it started; another name under it: a conflict", async () => {
      const first = await durable.publish("order.created", { orderId: "o-3", total: 1 }, { id: "evt-3" });
      await drain();
      const again = await durable.publish("order.created", { orderId: "o-3", total: 1 }, { id: "evt-3" });
      expect(again).toEqual(first);
      expect(await counts()).toEqual({ events: 1, runs: 1 });
      expect((await durable.status(first.runs[0]!.id))?.status).toBe("completed");
      await expect(durable.publish("order.refunded", {}, { id: "evt-3" })).rejects.toThrow(RunStateConflictError);
      expect(await counts()).toEqual({ events: 1, runs: 1 });
    });

    it("data a subscriber's schema refuses: InvalidInputError naming it, and nothing is written", async () => {
      const error = await durable.publish("audit.entry", { actor: "" }, { id: "a-1" }).catch((e) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error.message).toBe('the input of workflow "strict-audit" is invalid');
      expect(await counts()).toEqual({ events: 0, runs: 0 });
      const ok = await durable.publish("audit.entry", { actor: "ann" }, { id: "a-2" });
      expect(ok.runs.map((run) => run.workflow)).toEqual(["loose-audit", "strict-audit"]);
    });

    it("bad arguments are refused clearly and write nothing", async () => {
      const bad: [string, () => Promise<unknown>, RegExp][] = [
        ["empty name", () => durable.publish("", {}), /an event name/],
        ["name not a string", () => durable.publish(42 as never, {}), /an event name/],
        ["id too long", () => durable.publish("x", {}, { id: "i".repeat(256) }), /an event id/],
        ["id with NUL", () => durable.publish("x", {}, { id: "a\u0000b" }), /an event id/],
        ["source empty", () => durable.publish("x", {}, { source: "" }), /an event source/],
        ["data undefined", () => durable.publish("x", undefined), /not undefined/],
        ["data with NUL", () => durable.publish("x", { s: "a\u0000" }), /NUL/],
        ["data a cycle", () => durable.publish("x", cyclic()), /cannot be serialized/],
        ["tx not a transaction", () => durable.publish("x", {}, { tx: side.db as never }), /tx is a Kysely/],
        ["tx a string", () => durable.publish("x", {}, { tx: "tx" as never }), /tx is a Kysely/],
        ["options not an object", () => durable.publish("x", {}, 5 as never), /options is an object/],
      ];
      for (const [what, call, message] of bad) {
        const error = await call().catch((e: Error) => e);
        expect(error, what).toBeInstanceOf(InvalidInputError);
        expect((error as Error).message, what).toMatch(message);
      }
      expect(await counts()).toEqual({ events: 0, runs: 0 });
    });

    it("a subscriber whose singleton key is held: RunStateConflictError, no event nor run written", async () => {
      const first = await durable.publish("customer.synced", { customer: "c-1" }, { id: "s-1" });
      expect(first.runs).toHaveLength(1);
      await drain();
      const error = await durable.publish("customer.synced", { customer: "c-1" }, { id: "s-2" }).catch((e) => e);
      expect(error).toBeInstanceOf(RunStateConflictError);
      expect(error.message).toMatch(/event "s-2": run "event:per-customer\/s-2" was not started/);
      expect(await counts()).toEqual({ events: 1, runs: 1 });
    });

    it("run ids: readable when they fit and the workflow has no '/', else a hash; source is stored", async () => {
      const long = "e".repeat(250);
      const published = await durable.publish("order.refunded", { r: 1 }, { id: long, source: "stripe" });
      const ids = Object.fromEntries(published.runs.map((run) => [run.workflow, run.id]));
      expect(ids["on-refund"]).toMatch(/^event:[0-9a-f]{64}$/);
      expect(ids["billing/charge"]).toMatch(/^event:[0-9a-f]{64}$/);
      expect(ids["on-refund"]).not.toBe(ids["billing/charge"]);
      const short = await durable.publish("order.refunded", { r: 2 }, { id: "r-2" });
      expect(short.runs.find((run) => run.workflow === "on-refund")?.id).toBe("event:on-refund/r-2");
      expect(short.runs.find((run) => run.workflow === "billing/charge")?.id).toMatch(/^event:[0-9a-f]{64}$/);
      const stored = await sql<any>`select source from durable_app_events where id = ${long}`.execute(side.db);
      expect(stored.rows).toEqual([{ source: "stripe" }]);
    });

    it("in the app's Kysely transaction: rolled back, nothing; committed, the event and its runs", async () => {
      await side.db
        .transaction()
        .execute(async (tx) => {
          await sql`insert into app_orders (id) values ('o-k1')`.execute(tx);
          await durable.publish("order.created", { orderId: "o-k1", total: 1 }, { id: "k-1", tx });
          throw new Error("the app changed its mind");
        })
        .catch(() => {});
      expect(await counts()).toEqual({ events: 0, runs: 0 });
      const published = await side.db.transaction().execute(async (tx) => {
        await sql`insert into app_orders (id) values ('o-k2')`.execute(tx);
        return durable.publish("order.created", { orderId: "o-k2", total: 1 }, { id: "k-2", tx });
      });
      expect(published.runs).toEqual([{ workflow: "send-receipt", id: "event:send-receipt/k-2" }]);
      expect(await counts()).toEqual({ events: 1, runs: 1 });
      await drain();
      expect((await durable.status("event:send-receipt/k-2"))?.status).toBe("completed");
    });

    it("from a tx step, in the step's transaction: the event commits once, with its receipt", async () => {
      await durable.start(emitter, { orderId: "o-e" }, { id: "em-1" });
      await drain();
      expect((await durable.status("em-1"))!.output).toEqual({
        eventId: "emitted-em-1",
        runs: [{ workflow: "send-receipt", id: "event:send-receipt/emitted-em-1" }],
      });
      expect((await durable.status("event:send-receipt/emitted-em-1"))?.status).toBe("completed");
      expect(await counts()).toEqual({ events: 1, runs: 2 });
    });

    it("a transaction that is not read committed is refused, and nothing is written", async () => {
      const error = await side.db
        .transaction()
        .setIsolationLevel("repeatable read")
        .execute((tx) => durable.publish("order.created", { orderId: "o-rr", total: 1 }, { id: "rr", tx }))
        .catch((e: Error) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toMatch(/the transaction is repeatable read; publish in a read committed one/);
      expect(await counts()).toEqual({ events: 0, runs: 0 });
    });

    it("in the app's Drizzle transaction: rolled back, nothing; committed, the event and its runs", async () => {
      await side.drizzle
        .transaction(async (tx) => {
          await tx.execute(drizzleSql`insert into app_orders (id) values ('o-d1')`);
          await durable.publish("order.created", { orderId: "o-d1", total: 1 }, { id: "d-1", tx });
          tx.rollback();
        })
        .catch(() => {});
      expect(await counts()).toEqual({ events: 0, runs: 0 });
      expect((await sql<any>`select count(*)::int as n from app_orders`.execute(side.db)).rows[0].n).toBe(0);
      const published = await side.drizzle.transaction(async (tx) => {
        await tx.execute(drizzleSql`insert into app_orders (id) values ('o-d2')`);
        return durable.publish("order.created", { orderId: "o-d2", total: 1 }, { id: "d-2", tx });
      });
      expect(published.runs).toEqual([{ workflow: "send-receipt", id: "event:send-receipt/d-2" }]);
      expect(await counts()).toEqual({ events: 1, runs: 1 });
      // A Drizzle db that is not a transaction is refused.
      await expect(durable.publish("x", {}, { tx: side.drizzle as never })).rejects.toThrow(InvalidInputError);
    });
  });
}

function cyclic(): unknown {
  const value: Record<string, unknown> = {};
  value.self = value;
  return value;
}
