// A worker process SIGKILLed just before and just after the statement that ends a run as continued
// and inserts its successor (durable_continue_run), on the real server: either both or neither
// were written, and the run continues once. Each run's effect (a `tx` step) lands once.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, createDurable, type Durable } from "@/lib/durable";
import type { FailpointName } from "@/lib/durable/engine/run/failpoints";
import { createTestDatabase } from "../helpers/databases";
import { killWorkerAt as killWorker } from "../helpers/kill-worker";
import { looper } from "./fixtures/looper";

let url: string;
let db: Kysely<any>;
let durable: Durable;

beforeAll(async () => {
  url = await createTestDatabase("durable_continue_sigkill");
  db = await connect(url, { driver: "pg" });
  durable = createDurable({ db, workflows: [looper], secrets: { durable: "t" }, log: () => {} });
  await durable.migrate();
  await sql`create table loop_effects (run_id text not null)`.execute(db);
});
afterAll(async () => {
  await durable?.close();
});

/** Advances `runId` in a worker process armed at `point`, which must SIGKILL itself there. */
const killWorkerAt = (runId: string, point: FailpointName) =>
  killWorker("tests/postgres/fixtures/continue-kill-worker.ts", url, runId, point);

const effectsOf = async () =>
  new Map(
    (
      await sql<{ run_id: string; n: number }>`
        select run_id, count(*)::int as n from loop_effects group by 1 order by 1`.execute(db)
    ).rows.map((row) => [row.run_id, row.n]),
  );

describe("a worker killed around the continue-as-new statement", () => {
  for (const point of ["finish.before", "finish.after"] as const) {
    it(`at ${point}: the run continues once, its successor starts once, every effect lands once`, async () => {
      const id = `loop-${point}`;
      await durable.start(looper, { n: 0, until: 2 }, { id });
      await killWorkerAt(id, point);
      const row = (await sql<any>`select status, continued_as from durable_runs where id = ${id}`.execute(db)).rows[0];
      const successor = await sql<any>`select id from durable_runs where continued_from = ${id}`.execute(db);
      if (point === "finish.before") {
        // Killed before the statement: neither the end nor the successor; the lease holds the run.
        expect(row).toEqual({ status: "running", continued_as: null });
        expect(successor.rows).toEqual([]);
      } else {
        // Killed after its commit: both.
        expect(row).toEqual({ status: "completed", continued_as: `${id}~1` });
        expect(successor.rows).toEqual([{ id: `${id}~1` }]);
      }
      await durable.testing.advanceClock("2m"); // the dead owner's lease (40 s budget + 1 s margin) ran out
      for (let i = 0; i < 10 && (await durable.countDue()) > 0; i++) await durable.tick({ budgetMs: 40_000 });
      const chain = await sql<any>`
        select id, status, continued_as, continued_from, output from durable_runs
         where id like ${`${id}%`} order by id`.execute(db);
      expect(chain.rows).toEqual([
        { id, status: "completed", continued_as: `${id}~1`, continued_from: null, output: null },
        { id: `${id}~1`, status: "completed", continued_as: `${id}~2`, continued_from: id, output: null },
        { id: `${id}~2`, status: "completed", continued_as: null, continued_from: `${id}~1`, output: { done: 2 } },
      ]);
      const effects = await effectsOf();
      for (const run of [id, `${id}~1`, `${id}~2`]) expect(effects.get(run), run).toBe(1);
    });
  }
});
