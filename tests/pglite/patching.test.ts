import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineWorkflow } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { createTestDurable } from "@/lib/durable/testing";
import { runPatchingContract } from "../contract/patching-contract";

runPatchingContract("PGlite", () => connect("memory://"));

describe("ctx.patched under the testing harness", () => {
  it("a run driven by createTestDurable takes the new path and holds the marker; a mock answers the step", async () => {
    const order = defineWorkflow({
      name: "order",
      input: z.object({}),
      async run(ctx) {
        const checked = await ctx.patched("fraud-check");
        const verdict = checked ? await ctx.step.run("fraud-check", () => "real call") : "unchecked";
        await ctx.step.sleep("cool-off", "1d");
        return verdict;
      },
    });
    const durable = await createTestDurable({ workflows: [order], skipSleeps: true });
    durable.mockStep("fraud-check", { result: "mocked" });
    const status = await durable.run(order, {});
    expect(status).toMatchObject({ status: "completed", output: "mocked" });
    expect(status.steps.map((step) => `${step.id}:${step.kind}`)).toEqual([
      "patch:fraud-check:patch",
      "fraud-check:run",
      "cool-off:sleep",
    ]);
    await durable.close();
  });
});
