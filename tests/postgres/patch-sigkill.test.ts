// A worker SIGKILLed while it writes a patch's marker, or right after (docs/guide/versions.md,
// "Patching"): the next owner answers the patch as the ledger says, one marker is left, and the
// step after it runs once more only when the dead worker may have started it.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, createDurable, type Durable } from "@/lib/durable";
import type { FailpointName } from "@/lib/durable/engine/run/failpoints";
import { createTestDatabase } from "../helpers/databases";
import { killWorkerAt as killWorker } from "../helpers/kill-worker";
import { effects, patchable } from "./fixtures/patchable";

let url: string;
let db: Kysely<any>;
let durable: Durable;

beforeAll(async () => {
  url = await createTestDatabase("durable_patch_sigkill");
  db = await connect(url, { driver: "pg" });
  effects.db = db;
  durable = createDurable({ db, workflows: [patchable], secrets: { durable: "t" } });
  await durable.migrate();
  await sql`create table patch_effects (run_id text not null, attempt int not null, is_reclaim boolean)`.execute(db);
});
afterAll(async () => {
  await durable?.close();
});

/** Advances `runId` in a worker process armed at `point`, which must SIGKILL itself there. */
const killWorkerAt = (runId: string, point: FailpointName) =>
  killWorker("tests/postgres/fixtures/patch-kill-worker.ts", url, runId, point);

describe("a worker killed at a patch", () => {
  it("before its marker is written: the next owner writes it, answers true, and runs the step once", async () => {
    // The marker is the run's first receipt: the failpoint before a receipt's write is the marker's.
    const { id } = await durable.start(patchable, {}, { id: "before-marker" });
    await killWorkerAt(id, "receipt.before-write");
    expect((await durable.status(id))!.steps).toEqual([]);
    await durable.testing.advanceClock("42s"); // the dead worker's lease: its 40 s budget + 1 s margin
    expect(await durable.tick({ budgetMs: 40_000 })).toMatchObject({ claimed: 1, completed: 1, healed: 1 });
    const status = (await durable.status(id))!;
    expect(status.output).toEqual({ patched: true, after: { attempt: 2, isReclaim: true } });
    expect(status.steps.map((step) => `${step.id}:${step.kind}`)).toEqual(["patch:x:patch", "after:run"]);
    const rows = await sql`select * from patch_effects where run_id = ${id}`.execute(db);
    expect(rows.rows).toHaveLength(1);
  });

  it("after its marker, inside the next step: the marker answers true, the step runs again as a reclaim", async () => {
    const { id } = await durable.start(patchable, {}, { id: "after-marker" });
    await killWorkerAt(id, "run.after-body");
    expect((await durable.status(id))!.steps.map((step) => step.id)).toEqual(["patch:x"]);
    await durable.testing.advanceClock("42s");
    expect(await durable.tick({ budgetMs: 40_000 })).toMatchObject({ claimed: 1, completed: 1, healed: 1 });
    const status = (await durable.status(id))!;
    expect(status.output).toEqual({ patched: true, after: { attempt: 2, isReclaim: true } });
    const rows = await sql<{ attempt: number; is_reclaim: boolean }>`
      select attempt, is_reclaim from patch_effects where run_id = ${id} order by attempt`.execute(db);
    // At least once: the dead worker's effect landed, and the next owner's ran as a reclaim.
    expect(rows.rows).toEqual([
      { attempt: 1, is_reclaim: false },
      { attempt: 2, is_reclaim: true },
    ]);
  });
});
