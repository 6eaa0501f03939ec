// The cost of `durable.publish` (docs/guide/events.md): one statement whatever the number of
// subscribers (durable_publish), each subscriber's run prepared (schema, keys) and inserted in it.
// Publishes of distinct ids, one after another, on PostgreSQL (pg) and on PGlite, with 1 and 10
// subscribed workflows, on the instance's pool and inside an app's Kysely transaction; and 10
// subscribers with encryption on. Statements are counted at the driver (`onQuery`).
import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow } from "../../lib/durable";
import { open, type Target } from "./databases";
import { percentile } from "./report";

const PUBLISHES = 600;
const ROUNDS = 3;
const WARMUP = 100;
const DATA = { orderId: "ord_1234", customer: "Ada Lovelace", amountCents: 4200, currency: "EUR" };
const KEY = { id: "bench", secret: randomBytes(32).toString("base64") };

const subscribers = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    defineWorkflow({
      name: `bench-subscriber-${i}`,
      on: "bench.order",
      input: z.object({ orderId: z.string(), customer: z.string(), amountCents: z.number(), currency: z.string() }),
      run: async () => null,
    }),
  );

interface Case {
  label: string;
  target: Target;
  subscribers: number;
  inTransaction: boolean;
  encrypt: boolean;
}

const CASES: Case[] = [
  { label: "pg, 1 subscriber", target: "postgres", subscribers: 1, inTransaction: false, encrypt: false },
  { label: "pg, 10 subscribers", target: "postgres", subscribers: 10, inTransaction: false, encrypt: false },
  { label: "pg, 10, in the app's tx", target: "postgres", subscribers: 10, inTransaction: true, encrypt: false },
  { label: "pg, 10, encrypted", target: "postgres", subscribers: 10, inTransaction: false, encrypt: true },
  { label: "PGlite, 1 subscriber", target: "pglite", subscribers: 1, inTransaction: false, encrypt: false },
  { label: "PGlite, 10 subscribers", target: "pglite", subscribers: 10, inTransaction: false, encrypt: false },
];

export interface PublishRow {
  label: string;
  /** Wall µs per publish: median and p95. */
  p50: number;
  p95: number;
  /** Statements the driver sent per publish (a transaction's begin and commit included). */
  statements: number;
  runsPerPublish: number;
}

async function publishOnce(durable: Durable, db: Kysely<any>, id: string, inTransaction: boolean) {
  if (!inTransaction) return durable.publish("bench.order", DATA, { id });
  return db.transaction().execute((tx) => durable.publish("bench.order", DATA, { id, tx }));
}

interface Bench {
  c: Case;
  db: Kysely<any>;
  durable: Durable;
  samples: number[];
  statements: number;
  runs: number;
  counting: boolean;
}

/** A case's instance on a fresh database, warmed up (JIT, plans) by untimed publishes. */
async function setUp(c: Case, n: number): Promise<Bench> {
  const bench = { c, samples: [], statements: 0, runs: 0, counting: false } as unknown as Bench;
  bench.db = await open(c.target, `events_${n}`, { onQuery: () => bench.counting && bench.statements++ });
  bench.durable = createDurable({
    db: bench.db,
    workflows: subscribers(c.subscribers),
    secrets: { durable: "bench" },
    encryption: c.encrypt ? { keys: [KEY] } : undefined,
    log: () => {},
  });
  await bench.durable.migrate();
  for (let i = 0; i < WARMUP; i++) await publishOnce(bench.durable, bench.db, `warm-${i}`, c.inTransaction);
  return bench;
}

/** One round of a case: PUBLISHES / ROUNDS publishes, timed one by one, their statements counted. */
async function round(bench: Bench, r: number): Promise<void> {
  bench.counting = true;
  for (let i = 0; i < PUBLISHES / ROUNDS; i++) {
    const began = performance.now();
    const published = await publishOnce(bench.durable, bench.db, `e-${r}-${i}`, bench.c.inTransaction);
    bench.samples.push((performance.now() - began) * 1000);
    bench.runs += published.runs.length;
  }
  bench.counting = false;
}

/** The section's figures, one row per case: the cases' rounds in turns, so load falls on all alike. */
export async function publishCost(): Promise<PublishRow[]> {
  const benches: Bench[] = [];
  for (const [n, c] of CASES.entries()) benches.push(await setUp(c, n));
  for (let r = 0; r < ROUNDS; r++) {
    for (const bench of r % 2 === 0 ? benches : [...benches].reverse()) await round(bench, r);
  }
  for (const bench of benches) await bench.durable.close();
  return benches
    .map((bench) => ({
      label: bench.c.label,
      p50: percentile(bench.samples, 50),
      p95: percentile(bench.samples, 95),
      statements: bench.statements / bench.samples.length,
      runsPerPublish: bench.runs / bench.samples.length,
    }))
    .map((row) => {
      // Distinct ids on a database of its own: every publish starts every subscriber's run.
      const c = CASES.find((x) => x.label === row.label)!;
      if (row.runsPerPublish !== c.subscribers) throw new Error(`${row.label}: ${row.runsPerPublish} runs per publish`);
      return row;
    });
}

/** The section's table and notes, under `heading` (bench.ts's, with the load average). */
export async function eventsSection(heading: (text: string) => void, table: (rows: string[][]) => void) {
  const rows = await publishCost();
  heading(
    `13. durable.publish: ${PUBLISHES} publishes of distinct ids per case, one after another, in ${ROUNDS} rounds ` +
      `taken in turns (after ${WARMUP} untimed), each starting one run per subscriber`,
  );
  const us = (v: number) => `${v.toFixed(0)} µs`;
  table([
    ["case", "p50", "p95", "statements", "runs started"],
    ...rows.map((r) => [r.label, us(r.p50), us(r.p95), r.statements.toFixed(1), r.runsPerPublish.toFixed(0)]),
  ]);
  console.log(
    `
  p50, p95: wall time of one publish as the caller sees it (the subscribers' inputs checked and prepared, sealed when
  encrypted, and the one durable_publish statement). statements: what the driver sent per publish; in the app's
  transaction that is begin, the publish and commit.`,
  );
}
