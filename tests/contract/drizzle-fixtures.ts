// The Drizzle side of the drizzleTx tests: an effect table declared and created with Drizzle,
// the drivers (node-postgres, Neon serverless, PGlite), and workflows bound to one Drizzle db.
// No vitest here: the SIGKILL worker (tests/postgres/fixtures/drizzle-kill-worker.ts) imports it.
import { eq, sql } from "drizzle-orm";
import { integer, type PgDatabase, type PgQueryResultHKT, pgTable, serial, text } from "drizzle-orm/pg-core";
import { z } from "zod";
import { defineWorkflow, FatalStepError, type StepInfo } from "@/lib/durable";
import { drizzleTx } from "@/lib/durable/drizzle";

export const effects = pgTable("drizzle_effects", {
  id: serial("id").primaryKey(),
  runId: text("run_id").notNull(),
  step: text("step").notNull(),
  attempt: integer("attempt").notNull(),
  amount: integer("amount").notNull(),
});
export const schema = { effects };

/** A Drizzle db over any of the three drivers, with the test schema's types. */
export type TestDrizzle = PgDatabase<PgQueryResultHKT, typeof schema>;

/** Creates the effect table through Drizzle (the app's own table, in the app's own ORM). */
export async function createEffectTable(db: TestDrizzle): Promise<void> {
  await db.execute(sql`create table if not exists drizzle_effects (
    id serial primary key, run_id text not null, step text not null, attempt int not null, amount int not null)`);
}

/** Every effect row, oldest first: what the tests assert on. */
export function effectRows(db: TestDrizzle) {
  return db.select().from(effects).orderBy(effects.id);
}

/** What the bodies report and wait on; a test sets `inside` to hold a body after its insert. */
export const probe = {
  calls: new Map<string, number>(),
  inside: null as null | ((runId: string, s: StepInfo) => Promise<void>),
  reset() {
    this.calls.clear();
    this.inside = null;
  },
};
const counted = (runId: string) => probe.calls.set(runId, (probe.calls.get(runId) ?? 0) + 1);

/** The workflows of one instance, each step on `db`. */
export function drizzleWorkflows(db: TestDrizzle) {
  const order = defineWorkflow({
    name: "drizzle-order",
    input: z.object({ amount: z.number(), pause: z.boolean().default(false) }),
    async run(ctx, input) {
      const charged = await drizzleTx(ctx, "charge", db, async (tx, s) => {
        counted(ctx.runId);
        const [row] = await tx
          .insert(effects)
          .values({ runId: ctx.runId, step: "charge", attempt: s.attempt, amount: input.amount })
          .returning();
        await probe.inside?.(ctx.runId, s);
        // The schema's relational queries are typed on the transaction too.
        const again = await tx.query.effects.findFirst({ where: eq(effects.id, row!.id) });
        return { id: again!.id, attempt: s.attempt, isReclaim: s.isReclaim, at: new Date(0) };
      });
      // Typed: the body's value after the JSON round trip (a Date comes back as its ISO text).
      const at: string = charged.at;
      if (input.pause) await ctx.step.sleep("pause", "1h");
      return { ...charged, at };
    },
  });

  const refusing = defineWorkflow({
    name: "drizzle-refusing",
    input: z.object({}),
    async run(ctx) {
      return drizzleTx(ctx, "charge", db, async (tx, s) => {
        counted(ctx.runId);
        await tx.insert(effects).values({ runId: ctx.runId, step: "charge", attempt: s.attempt, amount: 1 });
        throw new FatalStepError("card declined");
      });
    },
  });

  return { order, refusing, all: [order, refusing] };
}
