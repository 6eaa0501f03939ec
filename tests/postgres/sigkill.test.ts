// A worker process SIGKILLed inside a tx step, and another right after it: the effect lands once.
import { spawn } from "node:child_process";
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, createDurable, type Durable } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";
import { killable } from "./fixtures/killable";

let url: string;
let db: Kysely<any>;
let durable: Durable;

beforeAll(async () => {
  url = await createTestDatabase("durable_sigkill");
  db = await connect(url, { driver: "pg" });
  durable = createDurable({ db, workflows: [killable], secrets: { durable: "t" } });
  await durable.migrate();
  await sql`create table kill_effects (run_id text not null, attempt int not null)`.execute(db);
});
afterAll(async () => {
  await durable?.close();
});

/** Starts a worker, waits until it reports it reached `point`, then SIGKILLs it. */
function killWorkerAt(point: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "tests/postgres/fixtures/kill-worker.ts"], {
      env: { ...process.env, WORKER_DATABASE_URL: url, KILL_POINT: point },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    const timer = setTimeout(() => reject(new Error(`worker never reached ${point}: ${output}`)), 20_000);
    child.stdout.on("data", (chunk) => {
      output += chunk;
      if (output.includes(`AT:${point}`)) child.kill("SIGKILL");
    });
    child.on("exit", (_code, signal) => {
      clearTimeout(timer);
      signal === "SIGKILL" ? resolve() : reject(new Error(`worker exited without being killed: ${output}`));
    });
  });
}

describe("a worker killed mid-run", () => {
  for (const point of ["inside-tx", "after-tx"]) {
    it(`recovers from SIGKILL ${point}: the tx effect lands exactly once`, async () => {
      const { id } = await durable.start(killable, {}, { id: `killed-${point}` });
      await killWorkerAt(point);
      // The dead worker's lease (its 40 s budget + 1 s margin) must run out before anyone reclaims.
      expect((await durable.status(id))!.status).toBe("running");
      await durable.testing.advanceClock("42s");
      const report = await durable.tick({ budgetMs: 40_000 });
      expect(report).toMatchObject({ claimed: 1, completed: 1, healed: 1 });
      const status = (await durable.status(id))!;
      const effects = await sql<{ attempt: number }>`select attempt from kill_effects where run_id = ${id}`.execute(db);
      expect(effects.rows).toHaveLength(1);
      if (point === "inside-tx") {
        // The killed transaction rolled back; the new owner's attempt committed, flagged as a reclaim.
        expect(status.output).toEqual({
          charged: { attempt: 2, isReclaim: true },
          notified: { attempt: 1, isReclaim: false },
        });
        expect(effects.rows[0]!.attempt).toBe(2);
      } else {
        // The committed receipt answers; only the step after it runs again, as a reclaim.
        expect(status.output).toEqual({
          charged: { attempt: 1, isReclaim: false },
          notified: { attempt: 2, isReclaim: true },
        });
      }
      const idle = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and state like 'idle in transaction%'`.execute(db);
      expect(idle.rows[0]!.n).toBe(0);
    });
  }
});
