// Run streams (docs/model.md, "Run streams"), one suite run on every database: a step's writer
// appends in order under the fence, chunks of an attempt that did not complete are marked broken,
// and a superseded owner appends nothing.
import type { Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, type Durable, defineWorkflow, InvalidInputError } from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

let durableForBodies: Durable | undefined;
const gates = new Map<string, () => void>();
const caught = new Map<string, unknown>();

const chatter = defineWorkflow({
  name: "chatter",
  input: z.object({ words: z.array(z.string()), failFirst: z.boolean().default(false) }),
  async run(ctx, input) {
    return ctx.step.run(
      "say",
      async (s) => {
        const out = ctx.stream("say");
        for (const word of input.words) out.write({ word, attempt: s.attempt });
        if (input.failFirst && s.attempt === 1) {
          await out.flush();
          throw new Error("the first attempt breaks halfway");
        }
        return input.words.join(" ");
      },
      { retries: 1, retryDelay: 0 },
    );
  },
});

const twoAtOnce = defineWorkflow({
  name: "two-at-once",
  input: z.object({}),
  async run(ctx) {
    const speak = (id: string) =>
      ctx.step.run(id, async () => {
        const out = ctx.stream(id);
        for (let i = 0; i < 50; i++) {
          out.write(`${id}-${i}`);
          if (i % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
        }
        return id;
      });
    return Promise.all([speak("left"), speak("right")]);
  },
});

const cancelledMidway = defineWorkflow({
  name: "cancelled-midway",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.run("talk", async () => {
      const out = ctx.stream("talk");
      out.write("before");
      await out.flush();
      await new Promise<void>((resolve) => gates.set(ctx.runId, resolve));
      try {
        out.write("after");
        await out.flush();
      } catch (error) {
        caught.set(ctx.runId, error);
      }
      return "done";
    });
  },
});

const misuse = defineWorkflow({
  name: "stream-misuse",
  input: z.object({}),
  async run(ctx) {
    try {
      ctx.stream("nowhere");
    } catch (error) {
      caught.set(ctx.runId, error);
    }
    return ctx.step.run("fine", () => 1);
  },
});

const workflows = [chatter, twoAtOnce, cancelledMidway, misuse];

export function runStreamsContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`run streams on ${label}`, () => {
    let durable: Durable;
    let db: Kysely<any>;

    beforeAll(async () => {
      db = await open();
      durable = createDurable({ db, workflows, secrets: { durable: "test-secret" }, log: () => {} });
      durableForBodies = durable;
      await durable.migrate();
    });
    afterAll(async () => {
      await durable?.close();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
      caught.clear();
    });

    it("stores a step's chunks in order, numbered from 1, before its receipt", async () => {
      const words = Array.from({ length: 300 }, (_, i) => `w${i}`);
      const { id } = await durable.start(chatter, { words }, { id: "chat-1" });
      expect(await durable.advance(id)).toBe("completed");
      const read = await durable.readStream(id);
      expect(read?.status).toBe("completed");
      expect(read?.chunks.map((c) => c.seq)).toEqual(words.map((_, i) => i + 1));
      expect(read?.chunks.map((c) => (c.data as { word: string }).word)).toEqual(words);
      expect(read?.chunks.every((c) => c.stepId === "say" && c.attempt === 1 && !c.broken)).toBe(true);

      // Paged reads: after a seq, at most a limit.
      const page = await durable.readStream(id, { after: 100, limit: 5 });
      expect(page?.chunks.map((c) => c.seq)).toEqual([101, 102, 103, 104, 105]);
    });

    it("marks the chunks of an attempt that failed as broken, and keeps the retry's", async () => {
      const { id } = await durable.start(chatter, { words: ["a", "b"], failFirst: true }, { id: "chat-2" });
      for (let i = 0; i < 5 && (await durable.status(id))?.status !== "completed"; i++) await durable.advance(id);
      const read = await durable.readStream(id);
      expect(read?.status).toBe("completed");
      expect(read?.chunks.map((c) => [c.seq, c.attempt, (c.data as { word: string }).word, c.broken])).toEqual([
        [1, 1, "a", true],
        [2, 1, "b", true],
        [3, 2, "a", false],
        [4, 2, "b", false],
      ]);
    });

    it("keeps each step's chunks in order when two steps stream at once", async () => {
      const { id } = await durable.start(twoAtOnce, {}, { id: "two-1" });
      expect(await durable.advance(id)).toBe("completed");
      const chunks = (await durable.readStream(id, { limit: 1000 }))!.chunks;
      expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i + 1));
      for (const side of ["left", "right"]) {
        expect(chunks.filter((c) => c.stepId === side).map((c) => c.data)).toEqual(
          Array.from({ length: 50 }, (_, i) => `${side}-${i}`),
        );
      }
    });

    it("appends nothing for a superseded owner: a cancel in mid-stream refuses the next append", async () => {
      const { id } = await durable.start(cancelledMidway, {}, { id: "cancel-1" });
      const advancing = durable.advance(id);
      await until(() => gates.has(id), 10_000);
      await durableForBodies!.cancel(id, "stop talking");
      gates.get(id)!();
      expect(await advancing).toBe("lost");
      expect((caught.get(id) as Error)?.name).toBe("StepLeaseLostError");
      const read = await durable.readStream(id);
      expect(read?.status).toBe("cancelled");
      expect(read?.chunks.map((c) => c.data)).toEqual(["before"]);
      const events = await db
        .selectFrom("durable_events")
        .select(["kind", "data"])
        .where("run_id", "=", id)
        .where("kind", "=", "fence.rejected")
        .execute();
      expect(events.map((e) => (e.data as { write: string }).write)).toContain("stream");
    });

    it("refuses a writer outside a step's body, and bad reads, with clear errors", async () => {
      const { id } = await durable.start(misuse, {}, { id: "misuse-1" });
      expect(await durable.advance(id)).toBe("completed");
      expect(InvalidInputError.is(caught.get(id))).toBe(true);
      expect((caught.get(id) as Error).message).toContain('ctx.stream("nowhere")');
      expect(await durable.readStream("no-such-run")).toBeNull();
      await expect(durable.readStream(id, { after: -1 })).rejects.toThrow(InvalidInputError);
      await expect(durable.readStream(id, { limit: 5000 })).rejects.toThrow(InvalidInputError);
    });
  });
}
