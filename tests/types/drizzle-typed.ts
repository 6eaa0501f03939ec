// Type tests of drizzleTx (`tsc --noEmit` fails when they regress; nothing here runs): the body's
// `tx` is the transaction type of the db passed, with its schema, on each of the three drivers,
// and the step answers the body's value after the JSON round trip.
import type { PGlite } from "@electric-sql/pglite";
import type { Pool as NeonPool } from "@neondatabase/serverless";
import { eq } from "drizzle-orm";
import { drizzle as drizzleNeon } from "drizzle-orm/neon-serverless";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import type { Pool } from "pg";
import { expectTypeOf } from "vitest";
import { z } from "zod";
import { defineWorkflow } from "@/lib/durable";
import { type DrizzleTransactionOf, drizzleTx } from "@/lib/durable/drizzle";

const orders = pgTable("orders", {
  id: text("id").primaryKey(),
  total: integer("total").notNull(),
  createdAt: timestamp("created_at").notNull(),
});
const schema = { orders };

export function typed(pool: Pool, neonPool: NeonPool, pglite: PGlite) {
  const pgDb = drizzlePg({ client: pool, schema });
  const neonDb = drizzleNeon({ client: neonPool, schema });
  const pgliteDb = drizzlePglite({ client: pglite, schema });

  return defineWorkflow({
    name: "typed-drizzle",
    input: z.object({ total: z.number() }),
    async run(ctx, input) {
      const order = await drizzleTx(ctx, "create", pgDb, async (tx, s) => {
        expectTypeOf(tx).not.toBeAny();
        expectTypeOf(tx).toEqualTypeOf<DrizzleTransactionOf<typeof pgDb>>();
        expectTypeOf(s.externalKey).toEqualTypeOf<string>();
        const [row] = await tx
          .insert(orders)
          .values({ id: s.externalKey, total: input.total, createdAt: new Date() })
          .returning();
        // @ts-expect-error: orders has no column "amount"
        await tx.insert(orders).values({ id: "x", amount: 1, createdAt: new Date() });
        return row!;
      });
      // The body's value after the JSON round trip: a Date column is its ISO text.
      expectTypeOf(order).toEqualTypeOf<{ id: string; total: number; createdAt: string }>();

      const found = await drizzleTx(ctx, "find", neonDb, async (tx) => {
        // The schema's relational queries are typed on the transaction.
        return (await tx.query.orders.findFirst({ where: eq(orders.id, order.id) }))?.total ?? 0;
      });
      expectTypeOf(found).toEqualTypeOf<number>();

      const count = await drizzleTx(ctx, "count", pgliteDb, async (tx) => (await tx.select().from(orders)).length);
      expectTypeOf(count).toEqualTypeOf<number>();

      // @ts-expect-error: a Kysely handle is not a Drizzle db
      await drizzleTx(ctx, "wrong", {} as import("kysely").Kysely<any>, async () => 1);
      return { order, found, count };
    },
  });
}
