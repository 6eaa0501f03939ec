// Edit and resume (docs/guide/edit-and-resume.md), one suite run on every database: fork(id, {
// fromStep, overrides, reason }) starts a fork whose named receipts carry the given values, each
// marked step.edited (with the reason) on the timeline; a bad override changes nothing; the same
// fork raced from several connections is one run with one set of edits.
import { randomBytes } from "node:crypto";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createDurable,
  type Durable,
  defineWorkflow,
  FatalStepError,
  InvalidInputError,
  ResultTooLargeError,
} from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";

/** The step bodies that ran, in order, by run id and step. */
let ran: string[] = [];
/** What the "quote" step's provider answers; "garbage" makes "charge" fail. */
let quoteAnswer: unknown = { cents: -1 };

const checkout = defineWorkflow({
  name: "checkout",
  input: z.object({ order: z.string() }),
  async run(ctx, input) {
    const quote = await ctx.step.run("quote", () => {
      ran.push(`${ctx.runId}:quote`);
      return quoteAnswer as { cents: number };
    });
    const tax = await ctx.step.value("tax", () => Math.round(quote.cents * 0.2));
    await ctx.step.sleep("cool-off", "1s");
    const charge = await ctx.step.run("charge", () => {
      ran.push(`${ctx.runId}:charge`);
      if (quote.cents < 0) throw new FatalStepError(`bad quote: ${quote.cents}`);
      return { charged: quote.cents + tax };
    });
    const receipt = await ctx.step.run("receipt", () => {
      ran.push(`${ctx.runId}:receipt`);
      return `mailed ${input.order}`;
    });
    return { charge, receipt };
  },
});

export function runEditAndResumeContract(label: string, openDb: () => Promise<Kysely<any>>) {
  describe(`edit and resume: fork with overrides (${label})`, () => {
    let db: Kysely<any>;
    let durable: Durable;
    const instances: Durable[] = [];
    const instance = (options: Partial<Parameters<typeof createDurable>[0]> = {}) => {
      const made = createDurable({ db, workflows: [checkout], log: () => {}, ...options });
      instances.push(made);
      return made;
    };
    /** Runs `id` until it ends, moving the clock past its cool-off. */
    const finish = async (on: Durable, id: string) => {
      await on.advance(id);
      await on.testing.advanceClock("2s");
      await on.advance(id);
      return (await on.status(id, { ledger: true }))!;
    };
    const counts = async () => {
      const { rows } = await sql<{ runs: number; steps: number; events: number }>`
        select (select count(*)::int from durable_runs) as runs, (select count(*)::int from durable_steps) as steps,
               (select count(*)::int from durable_events) as events`.execute(db);
      return rows[0]!;
    };
    /** A failed source run "src": its quote was garbage, so its charge failed. */
    const failedSource = async () => {
      quoteAnswer = { cents: -1 };
      await durable.start(checkout, { order: "o-1" }, { id: "src" });
      const source = await finish(durable, "src");
      expect(source).toMatchObject({ status: "failed" });
      return source;
    };

    beforeAll(async () => {
      db = await openDb();
      await createDurable({ db, workflows: [] }).migrate();
    });
    afterAll(async () => {
      for (const made of instances) await made.close();
      await db?.destroy();
    });
    beforeEach(async () => {
      ran = [];
      await resetDurableTables(db);
      durable = instance();
    });

    it("a fork from a later step carries the overridden receipt, noted step.edited with the reason", async () => {
      const source = await failedSource();
      const forked = await durable.fork("src", {
        fromStep: "charge",
        id: "fixed",
        overrides: { quote: { cents: 1000 } },
        reason: "the provider answered garbage; the real quote was 10.00",
      });
      expect(forked).toMatchObject({ id: "fixed", created: true });
      // tax was copied as recorded (-0), quote replays the edit, charge and receipt run.
      const fork = await finish(durable, "fixed");
      expect(fork).toMatchObject({
        status: "completed",
        output: { charge: { charged: 1000 }, receipt: "mailed o-1" },
        forkedFrom: { runId: "src", stepId: "charge" },
      });
      expect(fork.steps.find((step) => step.id === "quote")).toMatchObject({
        status: "completed",
        result: { cents: 1000 },
      });
      expect(ran).toEqual(["src:quote", "src:charge", "fixed:charge", "fixed:receipt"]);
      const edits = (await durable.events("fixed")).filter((event) => event.kind === "step.edited");
      expect(edits).toEqual([
        expect.objectContaining({
          stepId: "quote",
          data: { from: "src", reason: "the provider answered garbage; the real quote was 10.00" },
        }),
      ]);
      const forkEvent = (await durable.events("fixed")).find((event) => event.kind === "fork");
      expect(forkEvent!.data).toMatchObject({ from: "src", fromStep: "charge", edited: 1 });
      // The source is not written.
      expect(await durable.status("src", { ledger: true })).toEqual(source);
    });

    it("an override at fromStep resumes past the failed step; one after fromStep waits to be reached", async () => {
      await failedSource();
      // The failed charge itself, edited: the fork replays it as completed and goes on.
      await durable.fork("src", { fromStep: "charge", id: "manual", overrides: { charge: { charged: 5 } } });
      const manual = await finish(durable, "manual");
      expect(manual).toMatchObject({ status: "completed", output: { charge: { charged: 5 }, receipt: "mailed o-1" } });
      expect(manual.steps.find((step) => step.id === "charge")).toMatchObject({ status: "completed", error: null });
      expect(ran).toEqual(["src:quote", "src:charge", "manual:receipt"]);
      // No reason given: the event says so with null.
      const [edit] = (await durable.events("manual")).filter((event) => event.kind === "step.edited");
      expect(edit).toMatchObject({ stepId: "charge", data: { from: "src", reason: null } });

      // From "quote" on, with "charge" overridden: quote runs again (now good), charge replays the edit.
      ran = [];
      quoteAnswer = { cents: 300 };
      await durable.fork("src", { fromStep: "quote", id: "later", overrides: { charge: { charged: 7 } } });
      const later = await finish(durable, "later");
      expect(later).toMatchObject({ status: "completed", output: { charge: { charged: 7 }, receipt: "mailed o-1" } });
      expect(ran).toEqual(["later:quote", "later:receipt"]);
      expect(later.steps.find((step) => step.id === "tax")).toMatchObject({ result: 60 });
    });

    it("refuses a bad override or reason with a clear error, writing nothing", async () => {
      await failedSource();
      const before = await counts();
      const refusals: [Record<string, unknown>, RegExp][] = [
        [{ overrides: { nope: 1 } }, /no step "nope" to override/],
        [{ overrides: { "cool-off": 1 } }, /"cool-off" is a sleep step: only run, tx and value/],
        [{ overrides: {} }, /names no step/],
        [{ overrides: [1] }, /overrides is an object/],
        [{ overrides: null }, /overrides is an object/],
        [{ overrides: "x" }, /overrides is an object/],
        [{ overrides: { quote: "\u0000" } }, /NUL/],
        [{ overrides: { quote: "\uD800" } }, /lone surrogate/],
        [{ overrides: { quote: 1n } }, /./],
        [{ overrides: { "": 1 } }, /step id/],
        [{ overrides: { quote: 1 }, reason: 42 }, /reason is a string/],
        [{ overrides: { quote: 1 }, reason: "x".repeat(1001) }, /at most 1000/],
        [{ overrides: { quote: 1 }, reason: "bad\u0000" }, /without NUL/],
        [{ reason: "no edits" }, /a reason goes with overrides/],
      ];
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      refusals.push([{ overrides: { quote: cyclic } }, /cannot be serialized/]);
      for (const [options, message] of refusals) {
        const fork = durable.fork("src", { fromStep: "charge", id: "refused", ...options } as never);
        // A BigInt is a valid result (its decimal string): only that one forks.
        if ((options.overrides as { quote?: unknown })?.quote === 1n) {
          await expect(fork).resolves.toMatchObject({ created: true });
          await sql`delete from durable_runs where id = 'refused'`.execute(db);
          await sql`delete from durable_events where run_id = 'refused'`.execute(db);
          continue;
        }
        await expect(fork, JSON.stringify(Object.keys(options))).rejects.toThrow(InvalidInputError);
        await expect(durable.fork("src", { fromStep: "charge", id: "refused", ...options } as never)).rejects.toThrow(
          message,
        );
      }
      expect(await counts()).toEqual(before);

      // Over the instance's result limit: ResultTooLargeError, as a step's result would be.
      const small = instance({ defaults: { maxResultBytes: 64 } });
      await expect(
        small.fork("src", { fromStep: "charge", id: "refused", overrides: { quote: "x".repeat(100) } }),
      ).rejects.toThrow(ResultTooLargeError);
      expect(await counts()).toEqual(before);
    });

    it("the release before overrides still forks through durable_fork_run's four arguments", async () => {
      await failedSource();
      const { rows } = await sql<{ answer: { outcome: string; copied: number } }>`
        select durable_fork_run('src', 'old-caller', 'charge', null::bigint) as answer`.execute(db);
      expect(rows[0]!.answer).toEqual({ outcome: "forked", copied: 3 });
      const events = await durable.events("old-caller");
      expect(events.map((event) => event.kind)).toEqual(["fork"]);
    });

    it("seals the overrides and the reason under the fork's key, and opens them for every reader", async () => {
      const secret = randomBytes(32).toString("base64");
      const sealing = instance({ encryption: { keys: [{ id: "k1", secret }] } });
      quoteAnswer = { cents: -1 };
      await sealing.start(checkout, { order: "o-9" }, { id: "src-enc" });
      await finish(sealing, "src-enc");
      const marker = `EDITmark${randomBytes(4).toString("hex")}`;
      await sealing.fork("src-enc", {
        fromStep: "charge",
        id: "enc-fork",
        overrides: { quote: { cents: 1, note: marker } },
        reason: `why: ${marker}`,
      });
      const { rows } = await sql<{ hits: number }>`
        select (select count(*)::int from durable_steps where result::text like ${`%${marker}%`})
             + (select count(*)::int from durable_events where data::text like ${`%${marker}%`}) as hits`.execute(db);
      expect(rows[0]!.hits).toBe(0);
      const fork = await finish(sealing, "enc-fork");
      expect(fork.steps.find((step) => step.id === "quote")!.result).toEqual({ cents: 1, note: marker });
      const [edit] = (await sealing.events("enc-fork")).filter((event) => event.kind === "step.edited");
      expect(edit!.data.reason).toBe(`why: ${marker}`);
    });

    it("the same fork raced from eight instances is one run, with one set of edits", async () => {
      await failedSource();
      const racers = Array.from({ length: 8 }, () => instance());
      const answers = await Promise.all(
        racers.map((racer) =>
          racer.fork("src", { fromStep: "charge", id: "raced", overrides: { quote: { cents: 9 } }, reason: "race" }),
        ),
      );
      expect(answers.filter((answer) => answer.created)).toHaveLength(1);
      const edits = (await durable.events("raced")).filter((event) => event.kind === "step.edited");
      expect(edits).toHaveLength(1);
      const fork = await finish(durable, "raced");
      expect(fork).toMatchObject({ status: "completed", output: { charge: { charged: 9 } } });
    });
  });
}
