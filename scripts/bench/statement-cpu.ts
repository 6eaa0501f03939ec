// Server and node CPU of one hot statement sent named (a prepared statement, planned once) and
// unnamed (parsed and planned at every send), through connect()'s Kysely handle as the store sends
// it: durable_claim_run finding nothing due, in alternating blocks of N sends on two one-session
// pools, the first two blocks of each left out as warm-up (docs/performance.md, "Prepared statements").
//   TEST_DATABASE_URL=… npx tsx scripts/bench/statement-cpu.ts [N, default 2000]
import { readFileSync } from "node:fs";
import { sql } from "kysely";
import { connect, createDurable, defineWorkflow } from "../../lib/durable";
import type { AnyKysely } from "../../lib/durable/drivers/connect";
import { z } from "zod";
import { createServerDatabase, dropServerDatabases } from "../support/server-database";
const wf = defineWorkflow({
  name: "w",
  input: z.object({}),
  async run() {
    return 1;
  },
});
/** CPU ms of a backend so far (utime + stime, 10 ms ticks). */
const cpuOf = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
};
async function main() {
  const url = await createServerDatabase("durable_stmt_cpu");
  const d = createDurable({ db: await connect(url), workflows: [wf] });
  await d.migrate();
  await d.close();
  const dbs = {
    named: await connect(url, { poolSize: 1, preparedStatements: true }),
    unnamed: await connect(url, { poolSize: 1, preparedStatements: false }),
  };
  const pids: Record<string, number> = {};
  for (const [k, db] of Object.entries(dbs))
    pids[k] = (await sql<{ p: number }>`select pg_backend_pid() as p`.execute(db)).rows[0]!.p;
  const claim = (db: AnyKysely) =>
    sql`
      select durable_claim_run(${'["w"]'}::jsonb, ${null}::text, ${60000}::bigint,
                               ${"[]"}::jsonb, ${"{}"}::jsonb, ${null}::jsonb,
                               ${"{}"}::jsonb, true) as claimed`.execute(db);
  const spent = { named: 0, unnamed: 0 };
  const node = { named: 0, unnamed: 0 };
  const N = Number(process.argv[2] ?? 2000),
    B = 12;
  for (let b = 0; b < B; b++) {
    for (const mode of (b % 2 ? ["named", "unnamed"] : ["unnamed", "named"]) as Array<"named" | "unnamed">) {
      const c0 = cpuOf(pids[mode]!);
      const n0 = process.cpuUsage();
      for (let i = 0; i < N; i++) await claim(dbs[mode]);
      const n = process.cpuUsage(n0);
      if (b >= 2) {
        spent[mode] += cpuOf(pids[mode]!) - c0;
        node[mode] += (n.user + n.system) / 1000;
      }
    }
  }
  const per = (ms: number) => ((ms * 1000) / (N * (B - 2))).toFixed(1);
  console.log(
    JSON.stringify({
      statement: "durable_claim_run, nothing due",
      serverUsNamed: per(spent.named),
      serverUsUnnamed: per(spent.unnamed),
      nodeUsNamed: per(node.named),
      nodeUsUnnamed: per(node.unnamed),
    }),
  );
  await dbs.named.destroy();
  await dbs.unnamed.destroy();
  await dropServerDatabases(["durable_stmt_cpu"]);
}
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
