// Text Postgres cannot store (lib/durable/text.ts): a lone UTF-16 surrogate or a NUL in an id, a
// name, a step's error or the body's own error. Before, such a receipt could never be written:
// every claim ran the step's effect again, the write failed again, and the run stayed pending for
// ever. Ids and names are refused at the API; error names and messages are made storable. One
// suite run on every database; the property at the end holds for any string JavaScript can hold.
import fc from "fast-check";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow, InvalidInputError } from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";

const LONE = "😀".slice(0, 1); // "\ud83d": the first half of a pair
const effects = new Map<string, number>();
const ran = (runId: string) => effects.set(runId, (effects.get(runId) ?? 0) + 1);

/** What a probe run does: its step's id, its outcome and the error it throws. */
interface ProbeCase {
  stepId: string;
  outcome: "result" | "step-throws" | "body-throws";
  message: string;
  errorName?: string;
}
// By run id: such strings cannot travel in the input, which is stored as jsonb too (and refused).
const cases = new Map<string, ProbeCase>();

/** One step, with the id, outcome and error its case names. */
const probe = defineWorkflow({
  name: "unstorable-probe",
  input: z.object({}),
  async run(ctx) {
    const test = cases.get(ctx.runId)!;
    const fail = () => {
      const error = new Error(test.message);
      if (test.errorName !== undefined) error.name = test.errorName;
      return error;
    };
    const value = await ctx.step.run(test.stepId, () => {
      ran(ctx.runId);
      if (test.outcome === "step-throws") throw fail();
      return test.outcome === "result" ? test.message : "done";
    });
    if (test.outcome === "body-throws") throw fail();
    return value;
  },
});

/** A step whose result is whatever fast-check made (a value the input schema cannot carry). */
const results = new Map<string, unknown>();
const anyResult = defineWorkflow({
  name: "unstorable-result",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.run("result", () => results.get(ctx.runId));
  },
});

const signalled = defineWorkflow({
  name: "unstorable-signal",
  input: z.object({ note: z.string().optional() }),
  async run(ctx) {
    return ctx.step.waitForSignal("go", { timeout: "1h" });
  },
});

const TERMINAL_OR_WAITING = ["completed", "failed", "cancelled", "waiting"];

export function runUnstorableTextContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`text Postgres cannot store, on ${label}`, () => {
    let durable: Durable;
    let db: Kysely<any>;
    let n = 0;
    const nextId = () => `run-${++n}`;

    beforeAll(async () => {
      db = await open();
      durable = createDurable({
        db,
        workflows: [probe, anyResult, signalled],
        secrets: { durable: "test-secret" },
        defaults: { lease: "2s", budget: "10s" },
        log: () => {},
      });
      await durable.migrate();
    });
    afterAll(async () => {
      await durable?.close();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
      effects.clear();
      results.clear();
      cases.clear();
    });

    /** Starts a probe, advances it once, and returns its status. */
    async function probeOnce(test: ProbeCase) {
      const id = nextId();
      cases.set(id, test);
      await durable.start(probe, {}, { id });
      await durable.advance(id, { budgetMs: 10_000 });
      return (await durable.status(id))!;
    }

    it("fails a run whose step id has a lone surrogate at once, without running the step's effect", async () => {
      const status = await probeOnce({ stepId: `send-${LONE}`, outcome: "result", message: "ok" });
      expect(status).toMatchObject({ status: "failed", attempts: 1, error: { code: "invalid_input" } });
      expect(status.error!.message).toContain("lone surrogate");
      expect(effects.get(status.id)).toBeUndefined();
    });

    it("stores a step's error and the body's error with each lone surrogate or NUL as U+FFFD", async () => {
      const message = `user text cut to a length: ${LONE} and a low half \udc00 and NUL \u0000.`;
      const stored = "user text cut to a length: \ufffd and a low half \ufffd and NUL \ufffd.";
      for (const outcome of ["step-throws", "body-throws"] as const) {
        const status = await probeOnce({ stepId: "send", outcome, message, errorName: `Bad${LONE}Name` });
        expect(status).toMatchObject({ status: "failed", attempts: 1, error: { code: "error", message: stored } });
        expect(effects.get(status.id)).toBe(1);
        if (outcome === "step-throws") expect(status.steps[0]).toMatchObject({ id: "send", status: "failed" });
        else expect(status.steps[0]).toMatchObject({ id: "send", status: "completed" });
      }
      // A paired surrogate is ordinary text: kept as it is.
      const emoji = await probeOnce({ stepId: "send-😀", outcome: "step-throws", message: "fine 😀" });
      expect(emoji.error!.message).toBe("fine 😀");
    });

    it("refuses run ids, signal names and delivery ids with a lone surrogate, storing nothing", async () => {
      await expect(durable.start(probe, {}, { id: `a${LONE}` })).rejects.toThrow(InvalidInputError);
      // Postgres would store both as "a\ufffd": they must not become one run.
      await expect(durable.start(probe, {}, { id: "a\udbff" })).rejects.toThrow(/lone surrogate/);
      // An input that holds one cannot be stored either: refused at start.
      await expect(durable.start(signalled, { note: LONE })).rejects.toThrow(/lone surrogate/);
      expect((await durable.list()).runs).toEqual([]);
      const { id } = await durable.start(signalled, {}, { id: "waits" });
      await durable.advance(id, { budgetMs: 10_000 });
      await expect(durable.signal({ runId: id, name: `go${LONE}` })).rejects.toThrow(InvalidInputError);
      await expect(durable.signal({ runId: id, name: "go", id: `evt-${LONE}` })).rejects.toThrow(InvalidInputError);
      expect((await durable.status(id))!.status).toBe("waiting");
      expect(() => defineWorkflow({ name: `wf${LONE}`, input: z.object({}), run: async () => null })).toThrow(
        InvalidInputError,
      );
    });

    it("ends every run terminal or waiting, whatever the ids, errors and results", async () => {
      // Any UTF-16 code unit (fast-check's own units are well-formed), with the bad ones made common.
      const codeUnit = fc.oneof(
        fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)),
        fc.constantFrom(LONE, "\udc00", "\u0000", "😀"),
      );
      const text = fc.string({ unit: codeUnit, maxLength: 40 });
      await fc.assert(
        fc.asyncProperty(
          text,
          text,
          fc.option(text, { nil: undefined }),
          fc.constantFrom("result" as const, "step-throws" as const, "body-throws" as const),
          async (stepId, message, errorName, outcome) => {
            const status = await probeOnce({ stepId, outcome, message, errorName });
            expect(TERMINAL_OR_WAITING).toContain(status.status);
            expect(effects.get(status.id) ?? 0).toBeLessThanOrEqual(1);
          },
        ),
        { numRuns: 60 },
      );
      await fc.assert(
        fc.asyncProperty(
          fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, stringUnit: codeUnit }),
          async (value) => {
            const { id } = await durable.start(anyResult, {}, { id: nextId() });
            results.set(id, value);
            await durable.advance(id, { budgetMs: 10_000 });
            expect(TERMINAL_OR_WAITING).toContain((await durable.status(id))!.status);
          },
        ),
        { numRuns: 60 },
      );
    });
  });
}
