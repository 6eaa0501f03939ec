// A run's claim and end with and without a lifecycle hook (docs/guide/lifecycle.md, "What it costs";
// docs/sql.md, "Follow-ups"): backend CPU per run, each round on fresh rows, the variants
// interleaved. `off`: the trigger durable_runs_followups disabled (the schema before it); `none`:
// the trigger, runs without followups (what every run without hooks pays: its WHEN); `hook`: each
// run has an onComplete, so its end inserts one run. Each run is claimed by a plain UPDATE and
// ended by durable_finish_run, in a DO loop. The backend's CPU is read from /proc, so the server
// must run on this machine.
//   TEST_DATABASE_URL=... npx tsx scripts/bench/lifecycle-end.ts <runs> <rounds>
import { readFileSync } from "node:fs";
import pg from "pg";
import { connect } from "../../lib/durable/drivers/connect";
import { migrate } from "../../lib/durable/store/migrate";
import { createServerDatabase } from "../support/server-database";

const N = Number(process.argv[2] ?? 20000);
const ROUNDS = Number(process.argv[3] ?? 5);
const url = await createServerDatabase("lifecycle_end");
const setup = await connect(url, { driver: "pg", poolSize: 1 });
await migrate(setup);
await setup.destroy();

const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
};
const HOOK = JSON.stringify({ completed: [{ workflow: "notify", version: null, deadline_in_ms: null }] });
const CLAIM_AND_END = `do $$
declare r record; v_now timestamptz;
begin
  for r in select id from durable_runs where workflow = 'job' order by id loop
    v_now := durable_now();
    update durable_runs set status = 'running', fence = fence + 1, attempts = attempts + 1,
           lease_until = v_now + interval '1 h', wake_at = v_now + interval '1 h', updated_at = v_now
     where id = r.id;
    perform durable_finish_run(r.id, 1, 'completed', '1'::jsonb, null, '[]'::jsonb, null);
  end loop;
end $$`;

type Variant = "off" | "none" | "hook";
async function once(variant: Variant): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query("truncate durable_runs cascade");
  await c.query(
    `insert into durable_runs (id, workflow, input, wake_at, followups)
     select 'u-' || lpad(g::text, 6, '0'), 'job', '{"n":1}', now(), $2::jsonb from generate_series(1, $1) g`,
    [N, variant === "hook" ? HOOK : null],
  );
  await c.query("vacuum analyze durable_runs");
  await c.query(`alter table durable_runs ${variant === "off" ? "disable" : "enable"} trigger durable_runs_followups`);
  const pid = (await c.query("select pg_backend_pid() as p")).rows[0].p;
  const t = cpuMs(pid);
  await c.query(CLAIM_AND_END);
  const spent = cpuMs(pid) - t;
  const hooks = (await c.query("select count(*)::int as n from durable_runs where workflow = 'notify'")).rows[0].n;
  if (hooks !== (variant === "hook" ? N : 0)) throw new Error(`${variant}: ${hooks} hook runs for ${N} ends`);
  await c.query("alter table durable_runs enable trigger durable_runs_followups");
  await c.end();
  return spent;
}

const totals: Record<Variant, number[]> = { off: [], none: [], hook: [] };
const orders: Variant[][] = [
  ["off", "none", "hook"],
  ["none", "hook", "off"],
  ["hook", "off", "none"],
];
for (let round = 0; round < ROUNDS; round++) {
  for (const variant of orders[round % 3]!) totals[variant].push(await once(variant));
}
for (const [variant, xs] of Object.entries(totals)) {
  const us = xs.map((ms) => (ms * 1000) / N);
  const median = [...us].sort((a, b) => a - b)[Math.floor(us.length / 2)]!;
  console.log(
    variant,
    "µs of backend CPU per run, median",
    median.toFixed(1),
    "of",
    us.map((x) => x.toFixed(1)).join(" "),
  );
}
