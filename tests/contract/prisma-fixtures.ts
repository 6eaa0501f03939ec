// The Prisma side of the prismaTx tests: the clients (Prisma 7 over @prisma/adapter-pg or Neon's
// adapter), the effect table, and workflows bound to one client. The client is generated from
// tests/fixtures/prisma/schema.prisma (its README says how).
// No vitest here: the SIGKILL worker (tests/postgres/fixtures/prisma-kill-worker.ts) imports it.
import { PrismaNeon } from "@prisma/adapter-neon";
import { PrismaPg } from "@prisma/adapter-pg";
import { z } from "zod";
import { defineWorkflow, FatalStepError, type StepInfo } from "@/lib/durable";
import { prismaTx } from "@/lib/durable/prisma";
import { PrismaClient } from "../fixtures/prisma/generated/client";

export type PrismaDriver = "pg" | "neon";

/** A Prisma client over `driver` on `url`, with a pool of at most `max` connections. */
export function prismaOn(driver: PrismaDriver, url: string, max = 4): PrismaClient {
  const adapter =
    driver === "neon" ? new PrismaNeon({ connectionString: url, max }) : new PrismaPg({ connectionString: url, max });
  return new PrismaClient({ adapter });
}

/** Creates the effect table (the schema's `Effect` model) on the client's database. */
export async function createEffectTable(prisma: PrismaClient): Promise<void> {
  await prisma.$executeRawUnsafe(`create table if not exists prisma_effects (
    id serial primary key, run_id text not null, step text not null, attempt int not null, amount int not null,
    total bigint not null default 0, created_at timestamptz(3) not null default now())`);
}

/** Every effect row, oldest first: what the tests assert on. */
export function effectRows(prisma: PrismaClient) {
  return prisma.effect.findMany({ orderBy: { id: "asc" } });
}

/** What the bodies report and wait on; a test sets `inside` to hold a body after its insert. */
export const probe = {
  calls: new Map<string, number>(),
  inside: null as null | ((runId: string, s: StepInfo) => Promise<void>),
  /** The attempts of the "flaky" workflow that throw before the one that commits. */
  failFirst: 0,
  reset() {
    this.calls.clear();
    this.inside = null;
    this.failFirst = 0;
  },
};
const counted = (runId: string) => probe.calls.set(runId, (probe.calls.get(runId) ?? 0) + 1);

/** The workflows of one instance, each step on `prisma`. */
export function prismaWorkflows(prisma: PrismaClient) {
  const order = defineWorkflow({
    name: "prisma-order",
    input: z.object({ amount: z.number(), pause: z.boolean().default(false) }),
    async run(ctx, input) {
      const charged = await prismaTx(ctx, "charge", prisma, async (tx, s) => {
        counted(ctx.runId);
        const row = await tx.effect.create({
          data: { runId: ctx.runId, step: "charge", attempt: s.attempt, amount: input.amount },
        });
        await probe.inside?.(ctx.runId, s);
        const again = await tx.effect.findUniqueOrThrow({ where: { id: row.id } });
        return { id: again.id, attempt: s.attempt, isReclaim: s.isReclaim, at: new Date(0) };
      });
      // Typed: the body's value after the JSON round trip (a Date comes back as its ISO text).
      const at: string = charged.at;
      if (input.pause) await ctx.step.sleep("pause", "1h");
      return { ...charged, at };
    },
  });

  const refusing = defineWorkflow({
    name: "prisma-refusing",
    input: z.object({}),
    async run(ctx) {
      return prismaTx(ctx, "charge", prisma, async (tx, s) => {
        counted(ctx.runId);
        await tx.effect.create({ data: { runId: ctx.runId, step: "charge", attempt: s.attempt, amount: 1 } });
        throw new FatalStepError("card declined");
      });
    },
  });

  // Throws after its write for the first `probe.failFirst` attempts, then commits: retried per policy.
  const flaky = defineWorkflow({
    name: "prisma-flaky",
    input: z.object({}),
    async run(ctx) {
      return prismaTx(
        ctx,
        "charge",
        prisma,
        async (tx, s) => {
          counted(ctx.runId);
          await tx.effect.create({ data: { runId: ctx.runId, step: "charge", attempt: s.attempt, amount: 1 } });
          if (s.attempt <= probe.failFirst) throw new Error(`gateway timeout (attempt ${s.attempt})`);
          return { attempt: s.attempt };
        },
        { retries: 2, retryDelay: 0 },
      );
    },
  });

  // A row with a bigint and a timestamp column, and values JSON cannot hold as they are.
  const values = defineWorkflow({
    name: "prisma-values",
    input: z.object({}),
    async run(ctx) {
      const stored = await prismaTx(ctx, "charge", prisma, async (tx, s) => {
        const row = await tx.effect.create({
          data: {
            runId: ctx.runId,
            step: "charge",
            attempt: s.attempt,
            amount: 1,
            total: 9007199254740993n,
            createdAt: new Date("2026-01-02T03:04:05.678Z"),
          },
        });
        return { row, big: -12n, when: new Date(0), gone: undefined, list: [undefined, 1n] };
      });
      // Typed after the round trip: a bigint is its decimal text, a Date its ISO text.
      const total: string = stored.row.total;
      const createdAt: string = stored.row.createdAt;
      return { ...stored, total, createdAt };
    },
  });

  return { order, refusing, flaky, values, all: [order, refusing, flaky, values] };
}
