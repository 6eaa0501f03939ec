// Workflow versions (docs/guide/versions.md, "Versions"), one suite run on every database: a run replays on the
// version it started with across a deploy that adds a newer one; a version no instance has waits,
// or fails when the instance says so.
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow, InvalidInputError } from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";

// v1 sleeps a day between its steps; v2 renamed the second step and answers differently.
const orderV1 = defineWorkflow({
  name: "order",
  version: 1,
  input: z.object({ sku: z.string() }),
  signals: { note: z.object({ text: z.string() }) },
  async run(ctx, input) {
    const reserved = await ctx.step.run("reserve", () => `reserved ${input.sku}`);
    await ctx.step.sleep("cool-off", "1d");
    return `${reserved}, shipped by v1`;
  },
});

const orderV2 = defineWorkflow({
  name: "order",
  version: 2,
  input: z.object({ sku: z.string(), express: z.boolean().default(false) }),
  signals: { note: z.object({ text: z.string(), author: z.string() }) },
  async run(ctx, input) {
    const reserved = await ctx.step.run("reserve-v2", () => `reserved ${input.sku}`);
    await ctx.step.sleep("cool-off", input.express ? "1h" : "1d");
    return `${reserved}, shipped by v2`;
  },
});

export function runVersionsContract(label: string, openDb: () => Promise<Kysely<any>>) {
  describe(`workflow versions (${label})`, () => {
    let db: Kysely<any>;
    const instances: Durable[] = [];
    /** A deployment: an instance over the same database with these workflows. */
    const deploy = (workflows: Parameters<typeof createDurable>[0]["workflows"], unknownVersion?: "wait" | "fail") => {
      const instance = createDurable({ db, workflows, unknownVersion, log: () => {} });
      instances.push(instance);
      return instance;
    };

    beforeAll(async () => {
      db = await openDb();
      await createDurable({ db, workflows: [] }).migrate();
    });
    afterAll(() => db?.destroy());
    beforeEach(() => resetDurableTables(db));

    it("a v1 run asleep across a deploy that adds v2 completes on v1's code; new runs start on v2", async () => {
      const v1Only = deploy([orderV1]);
      await v1Only.start(orderV1, { sku: "a-1" }, { id: "old" });
      await v1Only.tick({ budgetMs: 40_000 });
      expect(await v1Only.status("old")).toMatchObject({ status: "waiting", version: "1" });

      const both = deploy([orderV1, orderV2]);
      // start takes the newest, whichever version the caller names.
      await both.start(orderV1, { sku: "b-2" }, { id: "new" });
      expect((await both.status("new"))!.version).toBe("2");
      await both.testing.advanceClock("1d");
      await both.tick({ budgetMs: 40_000 });
      expect(await both.status("old")).toMatchObject({ status: "completed", output: "reserved a-1, shipped by v1" });
      expect((await both.status("old"))!.steps.map((s) => s.id)).toEqual(["reserve", "cool-off"]);
      // The new run took its first steps in that tick and sleeps its own day.
      await both.testing.advanceClock("1d");
      await both.tick({ budgetMs: 40_000 });
      expect(await both.status("new")).toMatchObject({ status: "completed", output: "reserved b-2, shipped by v2" });
      expect(both.workflows.get("order")).toBe(orderV2);
    });

    it("a version no instance has waits for one that has it (unknownVersion: wait)", async () => {
      await deploy([orderV1]).start(orderV1, { sku: "c-3" }, { id: "waits" });
      const v2Only = deploy([orderV2]);
      expect(await v2Only.countDue()).toBe(0);
      expect((await v2Only.tick({ budgetMs: 40_000 })).claimed).toBe(0);
      const status = (await v2Only.status("waits"))!;
      expect(status).toMatchObject({ status: "pending", version: "1" });
      expect(status.warnings).toContain(
        'workflow "order" version "1" is not registered in this deployment; ' +
          "the run stays due for one that registers it",
      );
      // A deployment that has v1 again takes it.
      expect((await deploy([orderV1, orderV2]).tick({ budgetMs: 40_000 })).claimed).toBe(1);
      expect((await v2Only.status("waits"))!.status).toBe("waiting");
    });

    it("fails a due run of a version it does not have with unknownVersion: fail, and leaves others", async () => {
      const v1Only = deploy([orderV1]);
      await v1Only.start(orderV1, { sku: "d-4" }, { id: "doomed" });
      await v1Only.start(orderV1, { sku: "e-5" }, { id: "asleep" });
      await v1Only.advance("asleep", { budgetMs: 40_000 }); // waiting a day: not due
      const strict = deploy([orderV2], "fail");
      const report = await strict.tick({ budgetMs: 40_000 });
      expect(report).toMatchObject({ failed: 1, claimed: 0 });
      const failed = (await strict.status("doomed"))!;
      expect(failed.status).toBe("failed");
      expect(failed.error).toEqual({
        code: "unknown_version",
        message: 'workflow "order" has no version \'1\' in this deployment (it registers ["2"])',
      });
      expect((await strict.events("doomed")).map((event) => event.kind)).toEqual(["version.unknown"]);
      expect((await strict.status("asleep"))!.status).toBe("waiting");
      // An unversioned run is a version too: a deployment with only versioned workflows fails it.
      await sql`insert into durable_runs (id, workflow, input, wake_at)
                values ('bare', 'order', '{}', durable_now())`.execute(db);
      expect((await strict.tick({ budgetMs: 40_000 })).failed).toBe(1);
      expect((await strict.status("bare"))!.error!.message).toContain("has no version without a version");
    });

    it("validates a signal with the schema of the run's own version", async () => {
      const both = deploy([orderV1, orderV2]);
      await deploy([orderV1]).start(orderV1, { sku: "f-6" }, { id: "v1-run" });
      await both.start(orderV2, { sku: "g-7" }, { id: "v2-run" });
      await expect(both.signal({ runId: "v1-run", name: "note", payload: { text: "hi" } })).resolves.toMatchObject({
        signalled: true,
      });
      await expect(both.signal({ runId: "v2-run", name: "note", payload: { text: "hi" } })).rejects.toThrow(
        /payload of signal "note" is invalid/,
      );
    });

    it("registers versions: the newest by number, the same version twice refused, bad versions refused", () => {
      const v10 = defineWorkflow({ ...orderV2, version: "10" });
      const v9 = defineWorkflow({ ...orderV2, version: "9" });
      const bare = defineWorkflow({ ...orderV1, version: undefined });
      expect(createDurable({ db, workflows: [v10, v9, bare] }).workflows.get("order")).toBe(v10);
      expect(createDurable({ db, workflows: [bare, v9] }).workflows.get("order")).toBe(v9);
      expect(() => createDurable({ db, workflows: [orderV1, defineWorkflow({ ...orderV1 })] })).toThrow(
        /two workflows are named "order" with version "1"/,
      );
      expect(() => createDurable({ db, workflows: [bare, bare] })).toThrow(/without a version/);
      // Numbers compare as numbers, not as their text.
      const newest = (...versions: (string | number)[]) =>
        createDurable({
          db,
          workflows: versions.map((version) => defineWorkflow({ ...orderV2, version })),
        }).workflows.get("order")!.version;
      expect(newest(1.25, 1.3)).toBe(1.3);
      expect(newest(1.3, 1.25)).toBe(1.3);
      expect(newest(0.25, 0.5)).toBe(0.5);
      expect(newest(-2, -1)).toBe(-1);
      expect(newest(2, 1e21)).toBe(1e21);
      expect(newest(10, 9, 100)).toBe(100);
      // Strings keep the numeric-aware order; a string is newer than any number.
      expect(newest("v2", "v10")).toBe("v10");
      expect(newest("2024-06-01", "2024-11-15")).toBe("2024-11-15");
      expect(newest(1e21, "2")).toBe("2");
      expect(newest("a", 5)).toBe("a");
      expect(() => newest(1, "1")).toThrow(/with version "1"/);
      for (const version of ["", "a\u0000b", Number.NaN, "x".repeat(256)]) {
        expect(() => defineWorkflow({ ...orderV1, version })).toThrow(InvalidInputError);
      }
      expect(() => createDurable({ db, workflows: [], unknownVersion: "drop" as "fail" })).toThrow(
        /unknownVersion is "wait" or "fail"/,
      );
    });
  });
}
