// Type tests of prismaTx (`tsc --noEmit` fails when they regress; nothing here runs): the body's
// `tx` is the transaction client of the Prisma client passed (a plain one and one made with
// `$extends`), and the step answers the body's value after the JSON round trip.
import { expectTypeOf } from "vitest";
import { z } from "zod";
import { defineWorkflow } from "@/lib/durable";
import { prismaTx } from "@/lib/durable/prisma";
import type { PrismaClient } from "../fixtures/prisma/generated/client";

export function typed(prisma: PrismaClient) {
  const extended = prisma.$extends({ model: { order: { shout: (id: string) => id.toUpperCase() } } });
  return defineWorkflow({
    name: "typed-prisma",
    input: z.object({ sku: z.string() }),
    async run(ctx, input) {
      const order = await prismaTx(ctx, "create", prisma, async (tx, s) => {
        expectTypeOf(tx).not.toBeAny();
        expectTypeOf(s.externalKey).toEqualTypeOf<string>();
        // @ts-expect-error not a field of Order
        await tx.order.findFirst({ where: { nope: 1 } });
        return tx.order.create({ data: { id: s.externalKey, sku: input.sku, customer: "c" } });
      });
      // After the JSON round trip: a DateTime is its ISO text.
      expectTypeOf(order.createdAt).toEqualTypeOf<string>();
      expectTypeOf(order.id).toEqualTypeOf<string>();
      const effect = await prismaTx(ctx, "effect", extended, async (tx) => {
        expectTypeOf(tx).not.toBeAny();
        expectTypeOf(tx.order.shout("a")).toEqualTypeOf<string>();
        return tx.effect.create({ data: { runId: ctx.runId, step: "effect", attempt: 1, amount: 1, total: 2n } });
      });
      expectTypeOf(effect.total).toEqualTypeOf<string>();
      // @ts-expect-error a Prisma client, not a model delegate
      await prismaTx(ctx, "wrong", prisma.order, async () => 1);
      return { id: order.id, at: order.createdAt, total: effect.total };
    },
  });
}
