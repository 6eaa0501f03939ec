// A parent with 10 children, start to completion (docs/performance.md, "Child runs"): the parent
// invokes 10 children at once (one suspension inserts them all), each child runs one `run` step,
// and the last child's end makes the parent due. Timed from `start` to the tick that completes
// the parent, on PGlite and on PostgreSQL; the statements of one such run counted at the driver
// (onQuery), `start` and the tick's closing next-wake read included.
import { z } from "zod";
import { createDurable, defineWorkflow } from "../../lib/durable";
import { open, type Target } from "./databases";

export const CHILDREN = 10;

const child = defineWorkflow({
  name: "bench-child",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    return ctx.step.run("double", () => input.n * 2);
  },
});

const parent = defineWorkflow({
  name: "bench-parent",
  input: z.object({}),
  async run(ctx) {
    return Promise.all(Array.from({ length: CHILDREN }, (_, n) => ctx.step.invoke(`c${n}`, child, { n })));
  },
});

export interface ChildrenFigure {
  samples: number;
  p50: number;
  mean: number;
  /** Statements of one run, start to completion. */
  statements: number;
  /** Of them, per kind (the SQL function called, or the statement's first words), most first. */
  byKind: [string, number][];
  /** Claims of the parent: one to start, one after its children ended. */
  parentClaims: number;
}

const WARMUP = 3;

/** `samples` parents of 10 children, one at a time: each started, then one tick drains it. */
export async function parentWithChildren(target: Target, samples: number): Promise<ChildrenFigure> {
  let trace: string[] | null = null;
  const db = await open(target, "children", { onQuery: (q) => trace?.push(q) });
  const durable = createDurable({ db, workflows: [child, parent], secrets: { durable: "bench" }, log: () => {} });
  await durable.migrate();
  const times: number[] = [];
  let statements: string[] = [];
  let parentClaims = 0;
  for (let i = 0; i < WARMUP + samples; i++) {
    const traced = i === WARMUP;
    if (traced) trace = [];
    const started = performance.now();
    const { id } = await durable.start(parent, {}, { id: `parent-${i}` });
    await durable.tick({ budgetMs: 40_000 });
    const elapsed = performance.now() - started;
    if (traced) [statements, trace] = [trace!, null];
    const status = await durable.status(id);
    if (status?.status !== "completed") throw new Error(`bench parent ${id}: ${status?.status}`);
    if (traced) parentClaims = status.attempts;
    if (i >= WARMUP) times.push(elapsed);
  }
  await durable.close();
  times.sort((a, b) => a - b);
  const kinds = new Map<string, number>();
  for (const q of statements) kinds.set(kindOf(q), (kinds.get(kindOf(q)) ?? 0) + 1);
  return {
    samples,
    p50: times[Math.floor(times.length / 2)]!,
    mean: times.reduce((a, b) => a + b, 0) / times.length,
    statements: statements.length,
    byKind: [...kinds].sort((a, b) => b[1] - a[1]),
    parentClaims,
  };
}

/** What a statement is: the SQL function it calls, the start's insert, or the tick's next-wake read. */
function kindOf(q: string): string {
  if (/insert into durable_runs/i.test(q)) return "start (insert)";
  if (/min\(wake_at\)/i.test(q)) return "next-wake read";
  return q.match(/durable_\w+(?=\()/)?.[0] ?? q.trim().split(/\s+/).slice(0, 2).join(" ").toLowerCase();
}
