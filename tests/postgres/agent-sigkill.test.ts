// A worker SIGKILLed inside an agent's tool call, after the tool's effect and before its receipt,
// on the real server: the next owner re-runs only that tool, with the same external key; the turns
// and tools that have receipts are answered from them (no model request, no second effect).
import { type ChildProcess, spawn } from "node:child_process";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, createDurable, type Durable } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";
import { type MockModelServer, startMockModelServer } from "../helpers/mock-model-server";
import { until } from "../helpers/until";
import { agentWithEffects, closeEffects } from "./fixtures/agent-with-effects";

let url: string;
let db: Kysely<any>;
let durable: Durable;
let server: MockModelServer;

beforeAll(async () => {
  server = await startMockModelServer();
  url = await createTestDatabase("durable_agent_sigkill");
  process.env.AGENT_EFFECTS_URL = url;
  db = await connect(url, { driver: "pg" });
  durable = createDurable({ db, workflows: [agentWithEffects], secrets: { durable: "t" }, log: () => {} });
  await durable.migrate();
  await sql`create table agent_effects (id serial primary key, tool text, external_key text, reclaim boolean)`.execute(
    db,
  );
});
afterAll(async () => {
  await durable?.close();
  await closeEffects();
  await server?.close();
});

function startWorker(): { child: ChildProcess; exited: Promise<NodeJS.Signals | null>; output: () => string } {
  const child = spawn(process.execPath, ["--import", "tsx", "tests/postgres/fixtures/agent-kill-worker.ts"], {
    env: { ...process.env, WORKER_DATABASE_URL: url, AGENT_EFFECTS_URL: url, HANG_TOOL: "stock" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  return { child, exited, output: () => output };
}

const effectRows = async () =>
  (
    await sql<{ tool: string; external_key: string; reclaim: boolean }>`
    select tool, external_key, reclaim from agent_effects order by id`.execute(db)
  ).rows;

describe("an agent's worker killed between a tool's effect and its receipt", () => {
  it("re-runs only that tool, with the same external key", async () => {
    // Turn 1 calls weather and lookupOrder, turn 2 calls stock, turn 3 answers.
    const { id } = await durable.start(agentWithEffects, {
      baseURL: server.url,
      prompt: "order 1042: weather, lookupOrder and stock",
    });
    const worker = startWorker();
    try {
      await until(() => {
        if (worker.child.exitCode !== null) throw new Error(`the worker exited early: ${worker.output()}`);
        return worker.output().includes("EFFECT stock");
      }, 30_000);
      worker.child.kill("SIGKILL");
      expect(await worker.exited).toBe("SIGKILL");
    } finally {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill("SIGKILL");
    }
    expect(server.requests()).toEqual({ "/v1/chat/completions": 2 });
    const before = await effectRows();
    // weather and lookupOrder ran side by side (one turn's calls), then stock.
    expect(before.map((r) => r.tool).sort()).toEqual(["lookupOrder", "stock", "weather"]);
    expect(before[2]!.tool).toBe("stock");
    const killed = (await durable.status(id))!;
    expect(killed.status).toBe("running");
    // Turn 2 and the tools of turn 1 have receipts; stock has none.
    expect(killed.steps.map((s) => [s.id, s.status])).toEqual([
      ["support/turn-1", "completed"],
      ["support/turn-1/tool-call_1_weather", "completed"],
      ["support/turn-1/tool-call_2_lookupOrder", "completed"],
      ["support/turn-2", "completed"],
    ]);

    // The dead worker's lease runs out; a status read heals the run and this process advances it.
    await durable.testing.advanceClock("42s");
    expect((await durable.status(id))!.status).toBe("pending");
    expect(await durable.advance(id)).toBe("completed");

    const after = await effectRows();
    expect(after.slice(0, 3)).toEqual(before);
    expect(after[3]).toEqual({ tool: "stock", external_key: before[2]!.external_key, reclaim: true });
    expect(after).toHaveLength(4);
    // Turns 1 and 2 were answered from their receipts: only turn 3 asked the model.
    expect(server.requests()).toEqual({ "/v1/chat/completions": 3 });
    const status = (await durable.status(id))!;
    expect(status.steps.find((s) => s.id === "support/turn-2/tool-call_3_stock")).toMatchObject({
      status: "completed",
      attempt: 2,
      externalKey: before[2]!.external_key,
    });
    expect((status.output as { text: string }).text).toContain('stock answered {"units":3}');
  });
});
