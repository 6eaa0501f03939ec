// Migration 0013 before and after (docs/performance.md, "The CHECK constraints"): backend CPU per run
// on a database at 0012 and one at 0013 (the same function set), measured interleaved, each round on
// fresh rows. `updates`: a claim's and an end's UPDATE of the run row, as plain statements in a DO
// loop. `functions`: the claim's UPDATE, three receipts (durable_record_step) and the end
// (durable_finish_run). `drain`: the engine, one tick loop draining <runs> runs of three `run` steps
// (the backends of the database: the loop's pool of 2). The backend's CPU is read from /proc, so the
// server must run on this machine.
//   TEST_DATABASE_URL=... npx tsx scripts/bench/narrow-row.ts <runs> <rounds> updates|functions|drain
import { readFileSync } from "node:fs";
import { sql } from "kysely";
import pg from "pg";
import { z } from "zod";
import { createDurable, defineWorkflow } from "../../lib/durable";
import { connect } from "../../lib/durable/drivers/connect";
import { migrate } from "../../lib/durable/store/migrate";
import { functionSet, migrations } from "../../lib/durable/store/migrations.generated";
import { createServerDatabase } from "../support/server-database";
import { measureCpu } from "./cpu";
const N = Number(process.argv[2] ?? 20000);
const ROUNDS = Number(process.argv[3] ?? 5);
const urls: Record<string, string> = {};
for (const variant of ["0012", "0013"]) {
  const url = await createServerDatabase(`narrow_row_${variant}`);
  const db = await connect(url, { driver: "pg", poolSize: 1 });
  const upTo = variant === "0012" ? 12 : 13;
  await migrate(db, { migrations: migrations.filter((m) => Number(m.name.slice(0, 4)) <= upTo), functionSet });
  await db.destroy();
  urls[variant] = url;
}
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
};
const FUNCTIONS = `do $$
declare r record; v_now timestamptz;
begin
  for r in select id from durable_runs where id like 'u-%' order by id loop
    v_now := durable_now();
    update durable_runs set status = 'running', fence = fence + 1, attempts = attempts + 1,
           lease_until = v_now + interval '1 h', wake_at = v_now + interval '1 h', updated_at = v_now
     where id = r.id;
    for k in 1..3 loop
      perform durable_record_step(r.id, 1, jsonb_build_object('step_id', 's' || k, 'seq', k, 'kind', 'run',
        'status', 'completed', 'attempt', 1, 'result', k, 'result_bytes', 1));
    end loop;
    perform durable_finish_run(r.id, 1, 'completed', '1'::jsonb, null, '[]'::jsonb, '{}'::jsonb);
  end loop;
end $$`;
const LOOP = `do $$
declare r record; v_now timestamptz;
begin
  for r in select id from durable_runs where id like 'u-%' order by id loop
    v_now := clock_timestamp();
    update durable_runs set status = 'running', fence = fence + 1, attempts = attempts + 1,
           lease_until = v_now + interval '30 s', wake_at = v_now + interval '30 s', updated_at = v_now,
           first_claimed_at = coalesce(first_claimed_at, v_now)
     where id = r.id;
    update durable_runs set status = 'completed', output = '1', error = null, wake_at = null, waiting_for = null,
           lease_until = null, lost_claims = 0, lost_lease_until = null, updated_at = v_now, finished_at = v_now,
           warnings = warnings || '[]'::jsonb
     where id = r.id and fence = 1 and status is not distinct from 'running';
  end loop;
end $$`;
async function once(variant: string): Promise<number> {
  const c = new pg.Client({ connectionString: urls[variant] });
  await c.connect();
  await c.query("delete from durable_runs where id like 'u-%'");
  await c.query(
    `insert into durable_runs (id, workflow, input, wake_at)
                 select 'u-' || lpad(g::text, 6, '0'), 'w', '{"n":1}', now() from generate_series(1, $1) g`,
    [N],
  );
  await c.query("vacuum analyze durable_runs");
  const pid = (await c.query("select pg_backend_pid() as p")).rows[0].p;
  const t = cpuMs(pid);
  await c.query(process.argv[4] === "functions" ? FUNCTIONS : LOOP);
  const spent = cpuMs(pid) - t;
  await c.end();
  return spent;
}
const threeRunSteps = defineWorkflow({
  name: "narrow-row-three",
  input: z.object({ n: z.number() }),
  async run(ctx, { n }) {
    const a = await ctx.step.run("a", () => n + 1);
    const b = await ctx.step.run("b", () => a + 1);
    return ctx.step.run("c", () => b + 1);
  },
});
const OPTIONS = { workflows: [threeRunSteps], secrets: { durable: "bench" }, log: () => {} };

/** One tick loop drains N fresh runs; the CPU ms of the database's backends meanwhile. */
async function drain(variant: string): Promise<number> {
  const admin = createDurable({ db: await connect(urls[variant]!, { driver: "pg", poolSize: 2 }), ...OPTIONS });
  await sql`truncate durable_runs cascade`.execute(admin.db);
  for (let i = 0; i < N; i += 1000) {
    const n = Math.min(1000, N - i);
    const ids = Array.from({ length: n }, (_, k) => `d-${i + k}`);
    await admin.startMany(
      threeRunSteps,
      ids.map((_, k) => ({ n: i + k })),
      { ids },
    );
  }
  await sql`vacuum analyze durable_runs`.execute(admin.db);
  await admin.close();
  const worker = createDurable({ db: await connect(urls[variant]!, { driver: "pg", poolSize: 2 }), ...OPTIONS });
  await Promise.all([sql`select 1`.execute(worker.db), sql`select 1`.execute(worker.db)]);
  const cpu = await measureCpu(urls[variant]);
  while ((await worker.tick({ budgetMs: 40_000 })).claimed > 0) {}
  const spent = cpu().server ?? Number.NaN;
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from durable_runs where status = 'completed'`.execute(worker.db);
  if (rows[0]!.n !== N) throw new Error(`drain incomplete: ${rows[0]!.n} of ${N} runs completed`);
  await worker.close();
  return spent;
}

const totals: Record<string, number[]> = { "0012": [], "0013": [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const v of round % 2 ? ["0013", "0012"] : ["0012", "0013"])
    totals[v]!.push(await (process.argv[4] === "drain" ? drain(v) : once(v)));
}
for (const [v, xs] of Object.entries(totals)) {
  const us = xs.map((ms) => ((ms * 1000) / N).toFixed(1));
  console.log(v, "µs of backend CPU per run:", us.join(" "));
}
