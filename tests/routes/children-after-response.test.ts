// A parent started through the routes runs its children after the answer, in the same
// invocation, instead of waiting for the next tick (docs/guide/composition.md, "Child runs").
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { defineWorkflow } from "@/lib/durable";
import { admin, createFixture, jsonRequest, type RouteFixture } from "./harness";

const leaf = defineWorkflow({
  name: "leaf",
  input: z.object({ n: z.number() }),
  output: z.number(),
  run: async (ctx, input) => ctx.step.run("double", () => input.n * 2),
});
const middle = defineWorkflow({
  name: "middle",
  input: z.object({ n: z.number() }),
  output: z.number(),
  async run(ctx, input) {
    const [a, b] = await Promise.all([
      ctx.step.invoke("a", leaf, { n: input.n }),
      ctx.step.invoke("b", leaf, { n: 1 }),
    ]);
    return a + b;
  },
});
const top = defineWorkflow({
  name: "top",
  input: z.object({}),
  async run(ctx) {
    const first = await ctx.step.invoke("first", middle, { n: 1 });
    // A second child started only once the first ended: the same call goes on with it.
    const second = await ctx.step.invoke("second", leaf, { n: first });
    return { first, second };
  },
});

let fx: RouteFixture;
beforeAll(async () => {
  fx = await createFixture({}, [leaf, middle, top]);
});
afterAll(() => fx.durable.close());

it("runs the children, grandchildren and later children of a started parent after the answer", async () => {
  const response = await fx.routes.runs.POST(jsonRequest("/runs", { workflow: "top", input: {}, id: "top-1" }, admin));
  expect(response.status).toBe(201);
  await fx.routes.idle();
  expect(await fx.durable.status("top-1")).toMatchObject({ status: "completed", output: { first: 4, second: 8 } });
  expect((await fx.durable.list({ parentId: "top-1" })).runs.map((run) => run.status)).toEqual([
    "completed",
    "completed",
  ]);
  expect(await fx.durable.countDue()).toBe(0);
});

it("advance(id) alone leaves the children to the next claim; with children it runs them", async () => {
  await fx.durable.start(middle, { n: 2 }, { id: "middle-alone" });
  expect(await fx.durable.advance("middle-alone")).toBe("waiting");
  expect((await fx.durable.status("middle-alone/a"))?.status).toBe("pending");
  await fx.durable.start(middle, { n: 2 }, { id: "middle-family" });
  expect(await fx.durable.advance("middle-family", { children: true })).toBe("completed");
  expect((await fx.durable.status("middle-family"))?.output).toBe(6);
});
