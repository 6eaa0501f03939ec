import { sql } from "kysely";
import { connect } from "@/lib/durable/drivers/connect";
import { migrate } from "@/lib/durable/store/migrate";
import { functionSet, migrations } from "@/lib/durable/store/migrations.generated";
const url = process.argv[2]!;
const db = await connect(url, { driver: "pg", poolSize: 1 });
console.log(await migrate(db, { migrations: migrations.slice(0, 12), functionSet }));
const n = Number(process.argv[3] ?? 1000000);
await sql`insert into durable_runs (id, workflow, input, status, wake_at, finished_at, output, attempts, fence)
  select 'run-' || g, 'wf', '{"a":1}', 'completed', null, now(), '{"ok":true}', 1, 1 from generate_series(1, ${n}) g`.execute(db);
await sql`insert into durable_steps (run_id, step_id, seq, kind, status, attempt, result, fence, started_at, updated_at)
  select 'run-' || g, 's' || k, k, 'run', 'completed', 1, '1', 1, now(), now()
    from generate_series(1, ${n}) g, generate_series(1, 3) k`.execute(db);
await sql`vacuum analyze durable_runs`.execute(db);
await sql`vacuum analyze durable_steps`.execute(db);
if (process.argv[4] === "stop") { await db.destroy(); process.exit(0); }
const t = performance.now();
console.log(await migrate(db));
console.log("0013 took", Math.round(performance.now() - t), "ms");
await db.destroy();
