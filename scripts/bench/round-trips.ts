// Round trips per engine operation, counted at the driver: every statement `onQuery` sees is
// tagged with the operation in progress, which the workflow body itself announces before each
// step (the body runs between the engine's statements, so the tag is exact).
import { sql } from "kysely";
import { z } from "zod";
import { createDurable, defineWorkflow } from "../../lib/durable";
import { open, type Target } from "./databases";

export type Operation =
  | "start"
  | "claim"
  | "run step"
  | "tx step"
  | "value step"
  | "sleep suspension"
  | "wake claim"
  | "completion"
  | "empty claim"
  | "tick end";

const OPERATIONS: readonly Operation[] = [
  "start",
  "claim",
  "run step",
  "tx step",
  "value step",
  "sleep suspension",
  "wake claim",
  "completion",
  "empty claim",
  "tick end",
];

let current: Operation = "start";
let claimsThisTick = 0;
let inTransaction = false;
// A run or value step's receipt is held back and written when the next step starts (or rides on
// the final statement): receipts outside a transaction belong to these steps, in this order.
let heldReceipts: Operation[] = [];
const tag = (operation: Operation) => (current = operation);
/**
 * The tag of a statement: a tick's second claim is the one that finds nothing due and ends it, and
 * the next-wake read a tick ends with is the tick's, not the operation before it.
 */
function tagOf(q: string): Operation {
  if (/^begin\b/i.test(q)) inTransaction = true;
  if (/^(commit|rollback)\b/i.test(q)) inTransaction = false;
  if (q.includes("durable_claim_run") && claimsThisTick++ > 0) return "empty claim";
  if (/\bmin\(wake_at\)/.test(q)) return "tick end";
  // An instance's first tick, then once a minute: runs held under a changed rate limit, the tick's own.
  if (q.includes("durable_release_rate_holds")) return "tick end";
  if (q.includes("durable_record_step") && !inTransaction && heldReceipts.length > 0) return heldReceipts.shift()!;
  return current;
}

const counted = defineWorkflow({
  name: "bench-counted",
  input: z.object({}),
  async run(ctx) {
    tag("run step");
    await ctx.step.run("call", () => 1);
    tag("tx step");
    await ctx.step.tx("write", async (tx) => {
      await sql`insert into bench_effects (run_id) values (${ctx.runId})`.execute(tx);
    });
    tag("value step");
    await ctx.step.value("stamp", () => 2);
    tag("sleep suspension");
    await ctx.step.sleep("nap", "1h");
    tag("completion");
    return "done";
  },
});

export interface RoundTrips {
  /** Statements per operation. */
  count: Record<Operation, number>;
  /** Statements of the tx step that are the body's own (the insert). */
  txOwn: number;
  /** Every statement of the traced run, tagged, in order. */
  trace: { operation: Operation; sql: string }[];
}

/** Traces one run of `counted` (run, tx, value, sleep, then completion after the clock moves on). */
export async function roundTrips(target: Target): Promise<RoundTrips> {
  const trace: { operation: Operation; sql: string }[] = [];
  let tracing = false;
  const db = await open(target, "round_trips", {
    onQuery: (q) => tracing && trace.push({ operation: tagOf(q), sql: q }),
  });
  // `testing: true`: the bench moves the clock of its own throwaway database to wake the sleep.
  const durable = createDurable({
    db,
    workflows: [counted],
    secrets: { durable: "bench" },
    log: () => {},
    testing: true,
  });
  await durable.migrate();
  await sql`create table bench_effects (run_id text)`.execute(db);
  tracing = true;
  heldReceipts = ["run step", "value step"];
  tag("start");
  await durable.start(counted, {}, { id: "rt" });
  tag("claim");
  claimsThisTick = 0;
  const first = await durable.tick({ budgetMs: 40_000 });
  tracing = false;
  await durable.testing.advanceClock("1h");
  tracing = true;
  tag("wake claim");
  claimsThisTick = 0;
  const second = await durable.tick({ budgetMs: 40_000 });
  tracing = false;
  await durable.close();
  if (first.waiting !== 1 || second.completed !== 1)
    throw new Error(`unexpected ticks: ${JSON.stringify({ first, second })}`);
  const count = Object.fromEntries(
    OPERATIONS.map((op) => [op, trace.filter((t) => t.operation === op).length]),
  ) as Record<Operation, number>;
  const txOwn = trace.filter((t) => t.operation === "tx step" && t.sql.includes("bench_effects")).length;
  return { count, txOwn, trace };
}

export interface StatementProfile {
  statements: number;
  /** Transactions committed: statements outside an explicit transaction, plus each `commit`. */
  commits: number;
  /** The statements in order, shortened. */
  sequence: string[];
}

/** Statements and commits of `advance` of one freshly started run of `workflow` (claim to completion). */
export async function profileRun(
  target: Target,
  workflow: Parameters<typeof createDurable>[0]["workflows"][number],
  input: unknown,
  setup: string[] = [],
): Promise<StatementProfile> {
  const statements: string[] = [];
  let tracing = false;
  const db = await open(target, "profile", { onQuery: (q) => tracing && statements.push(q) });
  const durable = createDurable({ db, workflows: [workflow], secrets: { durable: "bench" }, log: () => {} });
  await durable.migrate();
  for (const s of setup) await sql.raw(s).execute(db);
  const { id } = await durable.start(workflow, input, { id: "profiled" });
  tracing = true;
  const outcome = await durable.advance(id);
  tracing = false;
  await durable.close();
  if (outcome !== "completed") throw new Error(`profiled run: ${outcome}`);
  let inTx = false;
  let commits = 0;
  const sequence: string[] = [];
  for (const q of statements) {
    const text = q.trim();
    if (/^begin\b/i.test(text)) inTx = true;
    else if (/^commit\b/i.test(text)) {
      inTx = false;
      commits++;
    } else if (/^rollback\b/i.test(text)) inTx = false;
    else if (!inTx) commits++;
    sequence.push(text.match(/durable_\w+/)?.[0] ?? text.split(/\s+/).slice(0, 3).join(" ").toLowerCase());
  }
  return { statements: statements.length, commits, sequence };
}
