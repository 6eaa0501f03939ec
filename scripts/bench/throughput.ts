// Throughput: 3-step runs (run, tx with one insert, value) drained by concurrent tick loops, and
// the raw `pg` baseline of one transaction with one insert per step, measured in the same process.
import { sql, type Kysely } from "kysely";
import pg from "pg";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "../../lib/durable";
import { measureCpu, type CpuSpent } from "./cpu";
import { freshServerDatabase } from "./databases";

export const threeSteps = defineWorkflow({
  name: "bench-three-steps",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    const a = await ctx.step.run("call", () => input.n);
    await ctx.step.tx("write", async (tx) => {
      await sql`insert into bench_effects (run_id, step) values (${ctx.runId}, 'write')`.execute(tx);
    });
    const b = await ctx.step.value("stamp", () => a + 1);
    return b;
  },
});

export const STEPS_PER_RUN = 3;
const BENCH = { secrets: { durable: "bench" }, log: () => {} } as const;

export interface Drain {
  runs: number;
  steps: number;
  seconds: number;
  stepsPerSecond: number;
  runsPerSecond: number;
  claims: number;
  /** Claims given back unfinished (the next step did not fit the tick's remaining budget). */
  yielded: number;
  cpu: CpuSpent;
  /** 1 loop only: per statement kind, how many were sent and the ms from each send to the next send. */
  statements?: StatementTimes;
  /** 1 loop only: server time inside each durable_* function (pg_stat_user_functions, track_functions = pl). */
  functions?: FunctionTimes;
  /** Several loops: the database's sessions waiting on a lock, sampled while the loops drain. */
  lockWaits?: LockWaits;
}

export interface LockWaits {
  samples: number;
  /** Mean over samples of the sessions waiting on a heavyweight lock (row, transaction id, …). */
  mean: number;
  max: number;
}

/** Samples pg_stat_activity of the database every 10 ms until stopped. */
async function sampleLockWaits(url: string): Promise<() => Promise<LockWaits>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let stop = false;
  const counts: number[] = [];
  const sampling = (async () => {
    while (!stop) {
      const { rows } = await client.query(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`,
      );
      counts.push(rows[0].n);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return async () => {
    stop = true;
    await sampling;
    await client.end();
    return {
      samples: counts.length,
      mean: counts.reduce((a, b) => a + b, 0) / Math.max(1, counts.length),
      max: Math.max(0, ...counts),
    };
  };
}

export type FunctionTimes = { name: string; calls: number; selfMs: number; totalMs: number }[];

export type StatementTimes = Map<string, { count: number; ms: number }>;

/** The kind of a statement: the durable_* function it calls, or its first word. */
export const statementKind = (q: string) => q.match(/durable_\w+/)?.[0] ?? q.trim().split(/\s+/)[0]!.toLowerCase();

/** Sums, per statement kind, the time from each statement's send to the next one's (one loop: sequential). */
export function statementTimer() {
  const times: StatementTimes = new Map();
  let last: { kind: string; at: number } | null = null;
  const close = (at: number) => {
    if (!last) return;
    const entry = times.get(last.kind) ?? { count: 0, ms: 0 };
    entry.count++;
    entry.ms += at - last.at;
    times.set(last.kind, entry);
  };
  return {
    times,
    onQuery(q: string) {
      const at = performance.now();
      close(at);
      last = { kind: statementKind(q), at };
    },
    end() {
      close(performance.now());
      last = null;
    },
    reset() {
      times.clear();
      last = null;
    },
  };
}

const EFFECTS = `create table bench_effects (id bigserial primary key, run_id text not null, step text not null)`;

/** Starts `runs` runs (untimed) on `db`, `concurrency` at a time. */
async function startRuns(durable: Durable, runs: number, concurrency = 8): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < runs) {
        const i = next++;
        await durable.start(threeSteps, { n: i }, { id: `run-${String(i).padStart(6, "0")}` });
      }
    }),
  );
}

/** One tick loop: tick until a tick claims nothing. */
async function tickLoop(durable: Durable): Promise<{ claims: number; yielded: number }> {
  const total = { claims: 0, yielded: 0 };
  for (;;) {
    const report = await durable.tick({ budgetMs: 40_000 });
    total.claims += report.claimed;
    total.yielded += report.yielded;
    if (report.claimed === 0) return total;
  }
}

const sum = (loops: { claims: number; yielded: number }[]) =>
  loops.reduce((a, b) => ({ claims: a.claims + b.claims, yielded: a.yielded + b.yielded }), { claims: 0, yielded: 0 });

async function verify(db: Kysely<any>, runs: number): Promise<void> {
  const { rows } = await sql<{ completed: number; effects: number }>`
    select (select count(*)::int from durable_runs where status = 'completed') as completed,
           (select count(*)::int from bench_effects) as effects`.execute(db);
  if (rows[0]!.completed !== runs || rows[0]!.effects !== runs) {
    throw new Error(`drain incomplete: ${rows[0]!.completed} of ${runs} runs completed, ${rows[0]!.effects} effects`);
  }
}

/** `loops` concurrent tick loops, each its own createDurable and its own pool of 2, on the real server. */
export async function drainOnServer(runs: number, loops: number): Promise<Drain> {
  const url = await freshServerDatabase(`throughput_${loops}`);
  const trackFunctions = loops === 1 && (await enableFunctionStats(url));
  const admin = createDurable({
    db: await connect(url, { driver: "pg", poolSize: 8 }),
    workflows: [threeSteps],
    ...BENCH,
  });
  await admin.migrate();
  await sql.raw(EFFECTS).execute(admin.db);
  await startRuns(admin, runs);
  await sql`analyze`.execute(admin.db);
  // With one loop, statements are sequential: time each from its send to the next send.
  const timer = loops === 1 ? statementTimer() : null;
  const workers = await Promise.all(
    Array.from({ length: loops }, async () =>
      createDurable({
        db: await connect(url, { driver: "pg", poolSize: 2, onQuery: timer?.onQuery }),
        workflows: [threeSteps],
        ...BENCH,
      }),
    ),
  );
  // Open each pool's connections before the clock starts.
  await Promise.all(workers.map((w) => Promise.all([sql`select 1`.execute(w.db), sql`select 1`.execute(w.db)])));
  const cpu = await measureCpu(url);
  const locks = loops > 1 ? await sampleLockWaits(url) : null;
  timer?.reset();
  const t0 = performance.now();
  const claims = sum(await Promise.all(workers.map(tickLoop)));
  timer?.end();
  const seconds = (performance.now() - t0) / 1000;
  const spent = cpu();
  const lockWaits = await locks?.();
  await verify(admin.db, runs);
  await Promise.all(workers.map((w) => w.close())); // a closing session flushes its statistics
  const functions = trackFunctions ? await functionStats(admin.db) : undefined;
  await admin.close();
  return { ...summarize(runs, seconds, claims, spent), statements: timer?.times, functions, lockWaits };
}

/** Turns on per-function statistics for new sessions of the database (needs a superuser; false otherwise). */
async function enableFunctionStats(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`alter database "${new URL(url).pathname.slice(1)}" set track_functions = 'pl'`);
    return true;
  } catch {
    return false;
  } finally {
    await client.end();
  }
}

async function functionStats(db: Kysely<any>): Promise<FunctionTimes> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const { rows } = await sql<{ name: string; calls: number; self_ms: number; total_ms: number }>`
      select funcname as name, calls::int as calls, self_time as self_ms, total_time as total_ms
        from pg_stat_user_functions where funcname like 'durable%' order by total_time desc`.execute(db);
    if (rows.length > 0)
      return rows.map((r) => ({ name: r.name, calls: r.calls, selfMs: r.self_ms, totalMs: r.total_ms }));
    await new Promise((r) => setTimeout(r, 100));
  }
  return [];
}

/** One tick loop on in-memory PGlite (one session: everything is serialised). */
export async function drainOnPGlite(runs: number): Promise<Drain> {
  const durable = createDurable({ db: await connect("memory://"), workflows: [threeSteps], ...BENCH });
  await durable.migrate();
  await sql.raw(EFFECTS).execute(durable.db);
  await startRuns(durable, runs, 1);
  const cpu = await measureCpu();
  const t0 = performance.now();
  const claims = await tickLoop(durable);
  const seconds = (performance.now() - t0) / 1000;
  const spent = cpu();
  await verify(durable.db, runs);
  await durable.close();
  return summarize(runs, seconds, claims, spent);
}

function summarize(runs: number, seconds: number, claims: { claims: number; yielded: number }, cpu: CpuSpent): Drain {
  const steps = runs * STEPS_PER_RUN;
  return { runs, steps, seconds, stepsPerSecond: steps / seconds, runsPerSecond: runs / seconds, ...claims, cpu };
}

export interface Raw {
  transactions: number;
  seconds: number;
  stepsPerSecond: number;
  cpu: CpuSpent;
  /** 1 connection only: begin, insert, commit, each from its send to the next send. */
  statements?: StatementTimes;
}

/**
 * The baseline: `loops` loops doing `begin; insert; commit` per step (3 round trips), on one
 * connection (loops = 1) or sharing a `pg` pool of `loops` connections.
 */
export async function rawLoop(transactions: number, loops: number): Promise<Raw> {
  const url = await freshServerDatabase(`raw_${loops}`);
  const pool = new pg.Pool({ connectionString: url, max: loops });
  await pool.query(EFFECTS);
  const clients = await Promise.all(Array.from({ length: loops }, () => pool.connect()));
  for (const c of clients) c.release();
  let next = 0;
  const cpu = await measureCpu(url);
  const t0 = performance.now();
  const timer = loops === 1 ? statementTimer() : null;
  if (timer) {
    const client = await pool.connect();
    const insert = "insert into bench_effects (run_id, step) values ($1, 'write')";
    for (let i = 0; i < transactions; i++) {
      timer.onQuery("begin");
      await client.query("begin");
      timer.onQuery(insert);
      await client.query(insert, [`raw-${i}`]);
      timer.onQuery("commit");
      await client.query("commit");
    }
    timer.end();
    client.release();
  } else {
    await Promise.all(
      Array.from({ length: loops }, async () => {
        while (next < transactions) {
          const i = next++;
          const client = await pool.connect();
          try {
            await client.query("begin");
            await client.query("insert into bench_effects (run_id, step) values ($1, 'write')", [`raw-${i}`]);
            await client.query("commit");
          } finally {
            client.release();
          }
        }
      }),
    );
  }
  const seconds = (performance.now() - t0) / 1000;
  const spent = cpu();
  const { rows } = await pool.query("select count(*)::int as n from bench_effects");
  if (rows[0].n !== transactions) throw new Error(`raw loop committed ${rows[0].n} of ${transactions}`);
  await pool.end();
  return { transactions, seconds, stepsPerSecond: transactions / seconds, cpu: spent, statements: timer?.times };
}

/**
 * The engine's SQL without the engine: the statements `profileRun` traces for one run (claim, run
 * receipt, begin/insert/receipt/commit, finish with the value receipt), issued by hand on one `pg`
 * connection. Against the raw loop it prices the protocol (plpgsql, commits); against the
 * 1-loop drain, the engine's own JavaScript.
 */
export async function protocolLoop(runs: number): Promise<Drain> {
  const url = await freshServerDatabase("protocol");
  const admin = createDurable({
    db: await connect(url, { driver: "pg", poolSize: 8 }),
    workflows: [threeSteps],
    ...BENCH,
  });
  await admin.migrate();
  await sql.raw(EFFECTS).execute(admin.db);
  await startRuns(admin, runs);
  await sql`analyze`.execute(admin.db);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const stepJson = (stepId: string, seq: number, kind: string, result: string) =>
    `${JSON.stringify({
      step_id: stepId,
      seq,
      kind,
      status: "completed",
      attempt: 1,
      error: null,
      external_key: null,
      elapsed_ms: 0,
      wake_at: null,
      wake_in_ms: null,
      deadline_at: null,
      deadline_in_ms: null,
      polls: null,
    }).slice(0, -1)},"result":${result}}`;
  const receipt = (id: string, fence: number, stepId: string, seq: number, kind: string, result: string) =>
    client.query("select durable_record_step($1, $2::bigint, $3::jsonb) as recorded", [
      id,
      fence,
      stepJson(stepId, seq, kind, result),
    ]);
  const workflows = JSON.stringify([threeSteps.name]);
  let claims = 0;
  const cpu = await measureCpu(url);
  const t0 = performance.now();
  for (;;) {
    const { rows } = await client.query(
      "select durable_claim_run($1::jsonb, $2::text, $3::bigint, $4::jsonb) as claimed",
      [workflows, null, 41_000, "[]"],
    );
    const claimed = rows[0].claimed;
    if (!claimed) break;
    claims++;
    const id = claimed.run.id as string;
    const fence = Number(claimed.run.fence);
    await receipt(id, fence, "call", 0, "run", "1");
    await client.query("begin");
    await client.query("insert into bench_effects (run_id, step) values ($1, 'write')", [id]);
    await receipt(id, fence, "write", 1, "tx", "null");
    await client.query("commit");
    // The value step's receipt rides on the completion, as the engine sends it.
    await client.query(
      "select durable_finish_run($1, $2::bigint, $3, $4::jsonb, $5::jsonb, $6::jsonb, $7::jsonb) as finished",
      [id, fence, "completed", "2", null, "[]", stepJson("stamp", 2, "value", "2")],
    );
  }
  const seconds = (performance.now() - t0) / 1000;
  const spent = cpu();
  await client.end();
  await verify(admin.db, runs);
  await admin.close();
  return summarize(runs, seconds, { claims, yielded: 0 }, spent);
}
