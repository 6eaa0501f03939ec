// A worker SIGKILLed in the middle of an AI step's stream: the next owner reclaims the run and
// streams the answer again; the answer is stored once, and the killed attempt's chunks are broken.
import { type ChildProcess, spawn } from "node:child_process";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, createDurable, type Durable } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";
import { type MockModelServer, startMockModelServer } from "../helpers/mock-model-server";
import { until } from "../helpers/until";
import { aiStreamer } from "./fixtures/ai-streamer";

let url: string;
let db: Kysely<any>;
let durable: Durable;
let server: MockModelServer;

beforeAll(async () => {
  server = await startMockModelServer();
  url = await createTestDatabase("durable_ai_sigkill");
  db = await connect(url, { driver: "pg" });
  durable = createDurable({ db, workflows: [aiStreamer], secrets: { durable: "t" }, log: () => {} });
  await durable.migrate();
});
afterAll(async () => {
  await durable?.close();
  await server?.close();
});

function startWorker(): { child: ChildProcess; exited: Promise<NodeJS.Signals | null>; output: () => string } {
  const child = spawn(process.execPath, ["--import", "tsx", "tests/postgres/fixtures/ai-stream-worker.ts"], {
    env: { ...process.env, WORKER_DATABASE_URL: url },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  return { child, exited, output: () => output };
}

describe("an AI step's worker killed mid-stream", () => {
  it("is reclaimed: the answer is stored once, the killed attempt's chunks are broken", async () => {
    const words = Array.from({ length: 40 }, (_, i) => `token${i}`);
    const expected = `Echo: ${words.join(" ")}`;
    const { id } = await durable.start(aiStreamer, {
      baseURL: server.url,
      prompt: words.join(" "),
      chunkDelayMs: 60,
    });

    const worker = startWorker();
    let killedAfter = 0;
    try {
      // Some chunks are stored, and the answer is far from complete: kill the worker there.
      await until(async () => {
        if (worker.child.exitCode !== null) throw new Error(`the worker exited early: ${worker.output()}`);
        const read = await durable.readStream(id);
        killedAfter = read?.chunks.length ?? 0;
        return killedAfter >= 5;
      }, 20_000);
      worker.child.kill("SIGKILL");
      expect(await worker.exited).toBe("SIGKILL");
    } finally {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill("SIGKILL");
    }
    expect(worker.output()).not.toContain("DONE");
    expect(server.requests()).toEqual({ "/v1/chat/completions": 1 });
    const killed = (await durable.readStream(id))!;
    expect(killed.status).toBe("running");
    expect(killed.chunks.length).toBeLessThan(words.length);
    expect(killed.chunks.every((c) => c.attempt === 1)).toBe(true);

    // The dead worker's lease (its 40 s budget + 1 s margin) runs out; a status read heals the run,
    // and this process advances it: a reclaim of the AI step, which streams the answer again.
    await durable.testing.advanceClock("42s");
    expect((await durable.status(id))!.status).toBe("pending");
    expect(await durable.advance(id)).toBe("completed");
    expect(server.requests()).toEqual({ "/v1/chat/completions": 2 });

    const status = (await durable.status(id))!;
    expect(status.status).toBe("completed");
    expect(status.steps).toMatchObject([{ id: "answer", kind: "ai", status: "completed", attempt: 2 }]);
    expect(status.steps).toHaveLength(1);
    const stored = status.output as { text: string; finishReason: string };
    expect(stored).toMatchObject({ text: expected, finishReason: "stop" });

    const chunks = (await durable.readStream(id, { limit: 1000 }))!.chunks;
    const first = chunks.filter((c) => c.attempt === 1);
    const second = chunks.filter((c) => c.attempt === 2);
    expect(first.length).toBeGreaterThanOrEqual(killedAfter);
    expect(first.every((c) => c.broken)).toBe(true);
    expect(second.length).toBeGreaterThan(0);
    expect(second.every((c) => !c.broken)).toBe(true);
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i + 1));
    expect(
      chunks
        .filter((c) => !c.broken)
        .map((c) => c.data)
        .join(""),
    ).toBe(stored.text);
  });
});
