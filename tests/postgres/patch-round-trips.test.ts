// What a patch costs in round trips, counted at the driver (docs/guide/versions.md, "Patching"):
// on new ground one receipt (the marker, awaited before true is answered); answered from the
// marker or false, nothing.
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";

const statements: string[] = [];
const make = (patch: boolean) =>
  defineWorkflow({
    name: patch ? "patched" : "plain",
    input: z.object({}),
    async run(ctx) {
      const checked = patch ? await ctx.patched("x") : true;
      await ctx.step.sleep("nap", "1h");
      await ctx.step.run("after", () => checked);
      return checked;
    },
  });
const patched = make(true);
const plain = make(false);

let durable: Durable;
beforeAll(async () => {
  const db = await connect(await createTestDatabase("durable_patch_round_trips"), {
    driver: "pg",
    onQuery: (q) => statements.push(q),
  });
  durable = createDurable({ db, workflows: [patched, plain], secrets: { durable: "t" } });
  await durable.migrate();
});
afterAll(async () => {
  await durable?.close();
});

const kindOf = (q: string) =>
  (/durable_(claim_run|record_step|suspend_run|finish_run)\b/.exec(q)?.[1] ?? q.slice(0, 30)).replace("_run", "");

/** The statements of one `advance(id)`, by kind. */
async function advanceCounting(id: string): Promise<string[]> {
  statements.length = 0;
  await durable.advance(id, { budgetMs: 40_000 });
  return statements.map(kindOf);
}

it("a patch on new ground costs one receipt, its replay none", async () => {
  await durable.start(plain, {}, { id: "plain" });
  await durable.start(patched, {}, { id: "patched" });
  expect(await advanceCounting("plain")).toEqual(["claim", "suspend"]);
  expect(await advanceCounting("patched")).toEqual(["claim", "record_step", "suspend"]);
  await durable.testing.advanceClock("1h");
  // The replay answers the patch from its marker: the pass costs what the plain run's does.
  expect(await advanceCounting("plain")).toEqual(["claim", "finish"]);
  expect(await advanceCounting("patched")).toEqual(["claim", "finish"]);
  expect((await durable.status("patched"))!.output).toBe(true);
});
