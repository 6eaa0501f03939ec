// Patching a workflow in place (docs/guide/versions.md, "Patching"), one suite run on every
// database: `ctx.patched(id)` answers false to a run whose older code went on past the patch and
// true (with a marker receipt) to one reaching it for the first time; `ctx.deprecatePatch(id)`
// keeps the marker's position; `list({ beforePatch })` finds the runs not past it.
import type { Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow, InvalidInputError } from "@/lib/durable";
import type { AnyWorkflow } from "@/lib/durable/types";
import { resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

const input = z.object({ sku: z.string() });
const BUDGET = { budgetMs: 40_000 };
/** What the step bodies ran, by step id and run, across every deployment of a test. */
let ran: string[] = [];
const effect = (ctx: { runId: string }, step: string) => () => {
  ran.push(`${ctx.runId}:${step}`);
  return step;
};

// v1 as shipped: reserve, a day's cool-off, ship.
const shipV1 = defineWorkflow({
  name: "ship",
  input,
  async run(ctx) {
    await ctx.step.run("reserve", effect(ctx, "reserve"));
    await ctx.step.sleep("cool-off", "1d");
    await ctx.step.run("ship", effect(ctx, "ship"));
    return "v1 path";
  },
});

// v2 adds a fraud check before the cool-off, and a receipt after it: two patches.
const shipV2 = defineWorkflow({
  name: "ship",
  input,
  async run(ctx) {
    await ctx.step.run("reserve", effect(ctx, "reserve"));
    const checked = await ctx.patched("fraud-check");
    if (checked) await ctx.step.run("fraud-check", effect(ctx, "fraud-check"));
    await ctx.step.sleep("cool-off", "1d");
    const receipt = await ctx.patched("receipt");
    if (receipt) await ctx.step.run("receipt", effect(ctx, "receipt"));
    await ctx.step.run("ship", effect(ctx, "ship"));
    return `fraud-check ${checked}, receipt ${receipt}`;
  },
});

// v3, once no run can take the old path of "fraud-check": only the new path is left.
const shipV3 = defineWorkflow({
  name: "ship",
  input,
  async run(ctx) {
    await ctx.step.run("reserve", effect(ctx, "reserve"));
    await ctx.deprecatePatch("fraud-check");
    await ctx.step.run("fraud-check", effect(ctx, "fraud-check"));
    await ctx.step.sleep("cool-off", "1d");
    await ctx.deprecatePatch("receipt");
    await ctx.step.run("receipt", effect(ctx, "receipt"));
    await ctx.step.run("ship", effect(ctx, "ship"));
    return "v3 path";
  },
});

export function runPatchingContract(label: string, openDb: () => Promise<Kysely<any>>) {
  describe(`patching a workflow in place (${label})`, () => {
    let db: Kysely<any>;
    let logs: string[] = [];
    const instances: Durable[] = [];
    /** A deployment: an instance over the same database with this code of "ship". */
    const deploy = (...workflows: AnyWorkflow[]) => {
      const instance = createDurable({ db, workflows, log: (line) => logs.push(line) });
      instances.push(instance);
      return instance;
    };
    const stepsOf = async (durable: Durable, id: string) =>
      (await durable.status(id))!.steps.map((step) => `${step.id}:${step.kind}`);
    const drift = () => logs.filter((line) => line.includes("is the workflow deterministic?"));

    beforeAll(async () => {
      db = await openDb();
      await createDurable({ db, workflows: [] }).migrate();
    });
    afterAll(() => db?.destroy());
    beforeEach(async () => {
      ran = [];
      logs = [];
      await resetDurableTables(db);
    });

    it("a run asleep across a deploy replays the old path, a new run takes the new; v3 replays both", async () => {
      const v1 = deploy(shipV1);
      await v1.start(shipV1, { sku: "a" }, { id: "old" });
      await v1.tick(BUDGET);
      expect(await v1.status("old")).toMatchObject({ status: "waiting" });

      // The deploy, half a day later: v2's code under the same name. A run started now reaches
      // both patches first.
      const v2 = deploy(shipV2);
      await v2.testing.advanceClock("12h");
      await v2.start(shipV2, { sku: "b" }, { id: "new" });
      await v2.tick(BUDGET);
      expect(await stepsOf(v2, "new")).toEqual([
        "reserve:run",
        "patch:fraud-check:patch",
        "fraud-check:run",
        "cool-off:sleep",
      ]);
      // The old run passed "fraud-check" on v1 (its cool-off is recorded beyond it): false. It
      // reaches "receipt" for the first time after its sleep: true, as for any run on new ground.
      await v2.testing.advanceClock("12h");
      await v2.tick(BUDGET);
      expect(await v2.status("new")).toMatchObject({ status: "waiting" });
      expect(await v2.status("old")).toMatchObject({
        status: "completed",
        output: "fraud-check false, receipt true",
        warnings: [],
      });
      expect(await stepsOf(v2, "old")).toEqual([
        "reserve:run",
        "cool-off:sleep",
        "patch:receipt:patch",
        "receipt:run",
        "ship:run",
      ]);
      expect(ran.filter((step) => step.startsWith("old:"))).toEqual(["old:reserve", "old:receipt", "old:ship"]);

      // v3 deprecates both patches while "new" still sleeps with its markers; a third run starts on v3.
      const v3 = deploy(shipV3);
      await v3.start(shipV3, { sku: "c" }, { id: "newest" });
      await v3.tick(BUDGET);
      await v3.testing.advanceClock("12h");
      await v3.tick(BUDGET);
      await v3.testing.advanceClock("1d");
      await v3.tick(BUDGET);
      expect(await v3.status("new")).toMatchObject({ status: "completed", output: "v3 path", warnings: [] });
      expect(await stepsOf(v3, "new")).toEqual([
        "reserve:run",
        "patch:fraud-check:patch",
        "fraud-check:run",
        "cool-off:sleep",
        "receipt:run", // it reached "receipt" first on v3, which writes no marker
        "ship:run",
      ]);
      expect(ran.filter((step) => step.startsWith("new:"))).toEqual([
        "new:reserve",
        "new:fraud-check",
        "new:receipt",
        "new:ship",
      ]);
      // A run that starts on v3 writes no marker.
      expect(await v3.status("newest")).toMatchObject({ status: "completed", warnings: [] });
      expect(await stepsOf(v3, "newest")).toEqual([
        "reserve:run",
        "fraud-check:run",
        "cool-off:sleep",
        "receipt:run",
        "ship:run",
      ]);
      // Every replay met each receipt at its recorded position: the markers count as positions.
      expect(drift()).toEqual([]);
    });

    it("a marker answers every replay true, and a second call with the same id answers as the first", async () => {
      const answers: boolean[] = [];
      const twice = defineWorkflow({
        name: "twice",
        input,
        async run(ctx) {
          answers.push(await ctx.patched("x"));
          await ctx.step.sleep("nap", "1h");
          answers.push(await ctx.patched("x"));
          await ctx.step.run("after", effect(ctx, "after"));
          return answers.slice(-2);
        },
      });
      const durable = deploy(twice);
      await durable.start(twice, { sku: "t" }, { id: "t" });
      await durable.tick(BUDGET);
      await durable.testing.advanceClock("1h");
      await durable.tick(BUDGET);
      expect(await durable.status("t")).toMatchObject({ status: "completed", output: [true, true], warnings: [] });
      expect(answers).toEqual([true, true, true]);
      expect(await stepsOf(durable, "t")).toEqual(["patch:x:patch", "nap:sleep", "after:run"]);
      expect(drift()).toEqual([]);
    });

    it("a real divergence is still caught and named; a dropped marker is reported", async () => {
      const v2 = deploy(shipV2);
      await v2.start(shipV2, { sku: "d" }, { id: "marked" });
      await v2.tick(BUDGET);
      // Code that lost both the patch and its deprecatePatch: the marker's position is gone, so
      // the steps after it replay one position early, and the unreached marker is a warning.
      const dropped = defineWorkflow({
        name: "ship",
        input,
        async run(ctx) {
          await ctx.step.run("reserve", effect(ctx, "reserve"));
          await ctx.step.run("fraud-check", effect(ctx, "fraud-check"));
          await ctx.step.sleep("cool-off", "1d");
          await ctx.step.run("ship", effect(ctx, "ship"));
          return "dropped";
        },
      });
      const bare = deploy(dropped);
      await bare.testing.advanceClock("1d");
      await bare.tick(BUDGET);
      expect(drift()).toEqual(
        expect.arrayContaining([expect.stringContaining('step "fraud-check" replayed at position 1, recorded at 2')]),
      );
      expect((await bare.status("marked"))!.warnings).toEqual([
        'step "patch:fraud-check" has a receipt but was not reached by the execution that completed the run',
      ]);

      // A step that became another kind fails the run, naming it, patches or not.
      await v2.start(shipV2, { sku: "e" }, { id: "diverged" });
      await v2.tick(BUDGET);
      const changed = defineWorkflow({
        name: "ship",
        input,
        async run(ctx) {
          await ctx.step.run("reserve", effect(ctx, "reserve"));
          if (await ctx.patched("fraud-check")) await ctx.step.run("fraud-check", effect(ctx, "fraud-check"));
          await ctx.step.value("cool-off", () => "now");
          return "changed";
        },
      });
      await deploy(changed).testing.advanceClock("1d");
      await deploy(changed).tick(BUDGET);
      expect(await v2.status("diverged")).toMatchObject({
        status: "failed",
        error: { code: "step_kind_mismatch", message: expect.stringContaining('"cool-off"') },
      });
    });

    it("deprecatePatch over a run that took the old path says so, and the run goes on", async () => {
      const v1 = deploy(shipV1);
      await v1.start(shipV1, { sku: "s" }, { id: "skipped" });
      await v1.tick(BUDGET);
      // v3 deployed while a run that passed the patch on the old code is still in flight (a mistake
      // list({ beforePatch }) would have shown): the log names the run and the marker it lacks.
      const v3 = deploy(shipV3);
      await v3.testing.advanceClock("1d");
      await v3.tick(BUDGET);
      expect(logs).toEqual(
        expect.arrayContaining([
          "[skipped] patch:fraud-check is deprecated, but the run went on past it without its marker " +
            "(it took the old path): its replay may diverge",
        ]),
      );
      expect(await v3.status("skipped")).toMatchObject({ status: "completed", output: "v3 path" });
    });

    it("refuses a patch id that is not a storable name: the run fails, naming the call", async () => {
      const bad: unknown[] = ["", "x".repeat(250), "a\u0000b", "\ud800", 42, undefined, null, ["x"]];
      const caught: unknown[] = [];
      const refuses = defineWorkflow({
        name: "refuses",
        input: z.object({ at: z.number() }),
        async run(ctx, { at }) {
          try {
            // A body that swallows the error fails all the same.
            if (at < bad.length) await ctx.patched(bad[at] as string);
            else await ctx.deprecatePatch("");
          } catch (error) {
            caught.push(error);
          }
          await ctx.step.run("after", effect(ctx, "after"));
          return "ran on";
        },
      });
      const durable = deploy(refuses);
      for (let at = 0; at <= bad.length; at++) {
        await durable.start(refuses, { at }, { id: `bad-${at}` });
        await durable.advance(`bad-${at}`, BUDGET);
        const status = (await durable.status(`bad-${at}`))!;
        expect(status).toMatchObject({ status: "failed", error: { code: "invalid_input" } });
        expect(status.error!.message).toMatch(
          at < bad.length
            ? /^ctx\.patched: patch id .* is not a non-empty string of at most 249 characters/
            : /^ctx\.deprecatePatch: patch id ""/,
        );
        expect(status.steps).toEqual([]);
      }
      expect(caught.every((error) => InvalidInputError.is(error))).toBe(true);
      expect(ran).toEqual([]);
      // The longest id that fits is taken.
      const longest = defineWorkflow({
        name: "longest",
        input,
        run: async (ctx) => ctx.patched("y".repeat(249)),
      });
      const fits = deploy(longest);
      await fits.start(longest, { sku: "l" }, { id: "longest" });
      await fits.advance("longest", BUDGET);
      expect(await fits.status("longest")).toMatchObject({ status: "completed", output: true });
    });

    it("list({ beforePatch }) finds the runs not past a patch; a bad id is refused", async () => {
      const v1 = deploy(shipV1);
      await v1.start(shipV1, { sku: "o" }, { id: "old" }); // will pass the patch on v1's path
      await v1.tick(BUDGET);
      const v2 = deploy(shipV2);
      await v2.start(shipV2, { sku: "n" }, { id: "new" }); // holds the marker
      await v2.tick(BUDGET);
      await v2.start(shipV2, { sku: "p" }, { id: "pending" }); // not claimed yet: it has not passed
      await v1.start(shipV1, { sku: "f" }, { id: "finished" });
      await v1.cancel("finished"); // terminal: never "before" a patch
      const ids = async (filter: Parameters<Durable["list"]>[0]) =>
        (await v2.list(filter)).runs.map((run) => run.id).sort();
      expect(await ids({ beforePatch: "fraud-check" })).toEqual(["old", "pending"]);
      expect(await ids({ beforePatch: "fraud-check", status: "waiting" })).toEqual(["old"]);
      expect(await ids({ beforePatch: "receipt" })).toEqual(["new", "old", "pending"]);
      expect(await ids({ beforePatch: "never-used", workflow: "ship" })).toEqual(["new", "old", "pending"]);
      // cancelMany takes the filter too: the runs that could still take the old path.
      expect(await v2.cancelMany({ beforePatch: "fraud-check", status: "waiting" })).toEqual({
        matched: 1,
        changed: 1,
      });
      expect((await v2.status("old"))!.status).toBe("cancelled");
      for (const bad of ["", "z".repeat(250), 7, ["fraud-check"], null]) {
        await expect(v2.list({ beforePatch: bad as string })).rejects.toThrow(/^list: beforePatch: patch id /);
      }
      await expect(v2.cancelMany({ beforePatch: "" })).rejects.toThrow(InvalidInputError);
      expect((await v2.status("new"))!.status).toBe("waiting");
    });

    it("a marker write under a lost claim is refused: the stale owner never goes on as patched", async () => {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      let atGate = 0;
      const gated = defineWorkflow({
        name: "gated",
        input,
        async run(ctx) {
          // Between steps, the body waits here (test code only): the claim is taken meanwhile.
          atGate++;
          if (atGate === 1) await gate;
          const patched = await ctx.patched("x");
          await ctx.step.run("after", effect(ctx, "after"));
          return patched;
        },
      });
      const stale = deploy(gated);
      await stale.start(gated, { sku: "g" }, { id: "g" });
      const first = stale.advance("g", BUDGET);
      await until(() => atGate === 1);
      // The lease runs out and another owner takes the run, writes the marker and completes it.
      const next = deploy(gated);
      await next.testing.advanceClock("2m");
      await next.tick(BUDGET);
      expect(await next.status("g")).toMatchObject({ status: "completed", output: true });
      open();
      expect(await first).toBe("lost");
      expect(ran).toEqual(["g:after"]);
      const marker = (await next.status("g"))!.steps.filter((step) => step.kind === "patch");
      expect(marker.map((step) => step.id)).toEqual(["patch:x"]);
      // The stale owner's late marker parked on the recorded one.
      expect((await next.events("g")).map((event) => event.kind)).toContain("step.outcome-conflict");
    });

    it("a marker write after a cancel is refused and nothing after it runs", async () => {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      let atGate = false;
      const gated = defineWorkflow({
        name: "gated-cancel",
        input,
        async run(ctx) {
          atGate = true;
          await gate;
          await ctx.patched("x");
          await ctx.step.run("after", effect(ctx, "after"));
          return "done";
        },
      });
      const durable = deploy(gated);
      await durable.start(gated, { sku: "c" }, { id: "c" });
      const first = durable.advance("c", BUDGET);
      await until(() => atGate);
      await durable.cancel("c", "changed our mind");
      open();
      expect(await first).toBe("lost");
      expect(await durable.status("c")).toMatchObject({ status: "cancelled", steps: [] });
      expect(ran).toEqual([]);
    });

    it("a step after a marker written by a new owner is still a reclaim (the lost owner ran older code)", async () => {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      let inside = false;
      const reclaims: boolean[] = [];
      const oldCode = defineWorkflow({
        name: "charge",
        input,
        async run(ctx) {
          await ctx.step.run("reserve", effect(ctx, "reserve"));
          await ctx.step.run("charge", async (s) => {
            reclaims.push(s.isReclaim);
            inside = true;
            await gate; // the old owner hangs inside the body and loses its claim
            return "charged";
          });
          return "old";
        },
      });
      const newCode = defineWorkflow({
        name: "charge",
        input,
        async run(ctx) {
          await ctx.step.run("reserve", effect(ctx, "reserve"));
          // The patch changes what the step sends, and adds no step of its own.
          const cents = (await ctx.patched("in-cents")) ? 100 : 1;
          await ctx.step.run("charge", (s) => {
            reclaims.push(s.isReclaim);
            return `charged ${cents}`;
          });
          return "new";
        },
      });
      const before = deploy(oldCode);
      await before.start(oldCode, { sku: "r" }, { id: "r" });
      const first = before.advance("r", BUDGET);
      await until(() => inside);
      const after = deploy(newCode);
      await after.testing.advanceClock("2m");
      await after.tick(BUDGET);
      open();
      await first;
      expect(await after.status("r")).toMatchObject({ status: "completed", output: "new" });
      // The new owner wrote the marker, yet "charge" may have run under the lost claim: a reclaim
      // (a step the new path added would end that, as any new receipt does: docs/rules.md, rule 7a).
      expect(reclaims).toEqual([false, true]);
    });
  });
}
