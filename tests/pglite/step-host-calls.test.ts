// How often a step calls back into the engine (docs/layout.md, "The path of one step.run"): the
// step API is driven over a claimed run on PGlite, with its host wrapped in a Proxy that counts
// each verb called, from entering ctx.step.run (or tx) to its return.
import { createPayloadCodec } from "../../lib/durable/encryption/payload-codec";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { buildStepHost } from "@/lib/durable/engine/run/build-step-host";
import { Execution } from "@/lib/durable/engine/run/execution";
import type { StepHost } from "@/lib/durable/engine/run/step-host";
import { createStepRecorder } from "@/lib/durable/engine/run/step-recorder";
import { createStepApi } from "@/lib/durable/steps/step-api";
import { claimDueRun, type DurableDb } from "@/lib/durable/store";

const counted = defineWorkflow({ name: "counted", input: z.object({}), run: async () => null });

let durable: Durable;
let db: DurableDb;

beforeAll(async () => {
  db = (await connect("memory://")) as unknown as DurableDb;
  durable = createDurable({ db: db as never, workflows: [counted] });
  await durable.migrate();
});

afterAll(async () => {
  await durable.close();
});

/**
 * The host of a claim of run `runId` (started first when `start`), and the verbs called on it
 * since the last `take()`.
 */
async function countedHost(runId: string, start = true) {
  if (start) await durable.start(counted, {}, { id: runId });
  const claim = await claimDueRun(db, { workflows: ["counted"], leaseMs: 60_000, runId });
  if (!claim) throw new Error(`run ${runId} was not claimed`);
  const settings = {
    db,
    marginMs: 1_000,
    leaseMs: 30_000,
    budgetMs: 60_000,
    maxResultBytes: 1 << 20,
    inProcessWaitMs: 0,
    log: () => {},
    codec: createPayloadCodec(),
  };
  const exec = new Execution(settings, claim, performance.now() + 55_000, 55_000);
  let calls: string[] = [];
  const host = buildStepHost(exec, createStepRecorder(exec));
  const proxy = new Proxy(host, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(String(key));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as StepHost;
  const take = () => {
    const taken = calls;
    calls = [];
    return taken;
  };
  return { step: createStepApi(proxy), exec, take };
}

async function receipts(runId: string) {
  const { rows } = await sql<{ step_id: string; status: string; result: unknown }>`
    select step_id, status, result from durable_steps where run_id = ${runId} order by seq`.execute(db);
  return rows.map((r) => [r.step_id, r.status, r.result]);
}

describe("the step host", () => {
  it("is called back at most 5 times by a step.run that runs its body and records", async () => {
    const { step, take } = await countedHost("calls-run");
    expect(await step.run("first", () => ({ n: 1 }))).toEqual({ n: 1 });
    // Nothing held before it; its own receipt is held back (it rides on the next write).
    expect(take()).toEqual(["flushHeld", "reach", "fits", "attempt", "holdBack"]);
    expect(await step.run("second", () => ({ n: 2 }))).toEqual({ n: 2 });
    // flushHeld wrote the first receipt before the second body ran.
    const second = take();
    expect(second).toEqual(["flushHeld", "reach", "fits", "attempt", "holdBack"]);
    expect(second.length).toBeLessThanOrEqual(5);
    expect(await receipts("calls-run")).toEqual([["first", "completed", { n: 1 }]]);
  });

  it("writes a receipt at once when another step is in flight, within the same 5 calls", async () => {
    const { step, take } = await countedHost("calls-parallel");
    const results = await Promise.all([step.run("a", async () => "A"), step.run("b", async () => "B")]);
    expect(results).toEqual(["A", "B"]);
    const calls = take();
    // Two step.runs: each is flushHeld, reach, fits, attempt, then holdBack (one writes).
    expect(calls.filter((c) => c === "holdBack")).toHaveLength(2);
    expect(calls.length).toBeLessThanOrEqual(10);
    expect((await receipts("calls-parallel")).map(([id]) => id)).toContain("a");
  });

  it("answers a step with a receipt from the ledger in 3 calls, without running its body", async () => {
    const { step, exec } = await countedHost("calls-replay");
    await step.run("once", () => 1);
    await step.run("flushes-once", () => 2);
    exec.dispose();
    // A new execution of the same run, as the next owner would make once the lease ran out.
    await durable.testing.advanceClock("2m");
    const again = await countedHost("calls-replay", false);
    let ran = false;
    expect(
      await again.step.run("once", () => {
        ran = true;
        return 0;
      }),
    ).toBe(1);
    expect(ran).toBe(false);
    expect(again.take()).toEqual(["flushHeld", "reach", "answer"]);
  });
});
