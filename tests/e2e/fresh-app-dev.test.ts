// A fresh app made by `add-to-app`, under `next dev` on its embedded PGlite, ticks by itself: a run
// that sleeps 10 seconds completes with nobody reading its status, because the instrumentation.ts
// add-to-app wrote starts the local cron. The workflow's last step calls back into this test, so
// the test learns the run finished without asking the app about it. And it completes on time: the
// cron calls the tick route at the wake time the last tick reported, not at its next 5 s round.
// The run starts just after one of those rounds, so a cron that only called every 5 s would find
// the sleep over at the third round after it, about 5 s late. The times are the run's own (stored
// by the database clock), so a slow first compile of a route does not count.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DurableClient, makeSecrets } from "./helpers/durable-client";
import { addToApp, writeMinimalApp } from "./helpers/fresh-app";
import { startNextDev, type NextServer } from "./helpers/next-server";
import { until } from "../helpers/until";

const NAP_WORKFLOW = `import { z } from "zod";
import { defineWorkflow } from "../../lib/durable";

export const nap = defineWorkflow({
  name: "nap",
  input: z.object({ callback: z.string().url() }),
  async run(ctx, input) {
    const before = await ctx.step.value("before", () => Date.now());
    await ctx.step.sleep("ten-seconds", "10s");
    await ctx.step.run("call-back", async (s) => {
      const response = await fetch(input.callback, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ runId: ctx.runId, externalKey: s.externalKey }),
      });
      if (!response.ok) throw new Error(\`callback answered \${response.status}\`);
    });
    return { slept: Date.now() - before };
  },
});
`;

describe("a fresh app under next dev", () => {
  const app = mkdtempSync(path.join(os.tmpdir(), "durable-e2e-fresh-dev-"));
  const secrets = makeSecrets();
  const callbacks: { runId: string; at: number }[] = [];
  const receiver = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      callbacks.push({ ...(JSON.parse(body) as { runId: string }), at: Date.now() });
      response.end("ok");
    });
  });
  let server: NextServer | undefined;

  beforeAll(async () => {
    writeMinimalApp(app);
    const added = addToApp(app);
    if (added.status !== 0) throw new Error(`add-to-app failed:\n${added.output}`);
    mkdirSync(path.join(app, "app/workflows"));
    writeFileSync(path.join(app, "app/workflows/nap.ts"), NAP_WORKFLOW);
    const instance = readFileSync(path.join(app, "app/durable.ts"), "utf8");
    writeFileSync(
      path.join(app, "app/durable.ts"),
      `import { nap } from "./workflows/nap";\n${instance.replace("// register your workflows here", "nap,")}`,
    );
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    // No DATABASE_URL: the embedded PGlite in the app's .durable/, as a newcomer runs it.
    server = await startNextDev({
      dir: app,
      env: { ...secrets.env, DATABASE_URL: undefined, DURABLE_DRIVER: undefined, DURABLE_DEV_CRON_MS: undefined },
    });
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    await new Promise((resolve) => receiver.close(resolve));
    rmSync(app, { recursive: true, force: true });
  });

  it("completes a run with a 10-second sleep with nobody reading its status", async () => {
    const base = server!.url;
    const client = new DurableClient(base, secrets.env.DURABLE_SECRET, secrets.signalKey);
    const callback = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/done`;
    // Compile the runs route first (the start then takes milliseconds), and start just after a round
    // of the cron: next dev logs every call it serves.
    const warm = await fetch(`${base}/api/durable/runs?limit=1`, {
      headers: { authorization: `Bearer ${secrets.env.DURABLE_SECRET}` },
    });
    expect(warm.status).toBe(200);
    const ticks = () => server!.output().split("GET /api/durable/tick 200").length - 1;
    const seen = ticks();
    await until(() => ticks() > seen, 60_000);
    const startedAt = Date.now();
    const started = await client.start("nap", { callback }, "nap-1");
    expect(started).toMatchObject({ id: "nap-1", created: true });

    // Nothing but the local cron can wake the sleep: wait for the callback, reading nothing.
    const deadline = Date.now() + 90_000;
    while (callbacks.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(callbacks, server!.output().slice(-3000)).toHaveLength(1);
    expect(callbacks[0]!.runId).toBe("nap-1");
    expect(callbacks[0]!.at - startedAt).toBeGreaterThanOrEqual(10_000);
    // next dev logs every request it served: the start, and no status read of the run.
    expect(server!.output()).toMatch(/POST \/api\/durable\/runs 20\d/);
    expect(server!.output()).not.toMatch(/GET \/api\/durable\/runs\/nap-1/);

    // The server's log shows who woke it: the local cron, claiming the run. The callback is the run's
    // last step, so the tick that ran it answers (and the cron prints its report) a moment later.
    expect(server!.output()).toContain("[durable cron]");
    const claimedByCron = /\/api\/durable\/tick → \{[^\n]*"claimed":1/;
    const logged = Date.now() + 10_000;
    while (!claimedByCron.test(server!.output()) && Date.now() < logged) await new Promise((r) => setTimeout(r, 100));
    expect(server!.output()).toMatch(claimedByCron);

    // Now read it, once: completed, every step once.
    const { http: code, body } = await client.status("nap-1", started.statusToken);
    expect(code).toBe(200);
    expect(body.status).toBe("completed");
    expect(body.steps.map((s) => [s.id, s.status])).toEqual([
      ["before", "completed"],
      ["ten-seconds", "completed"],
      ["call-back", "completed"],
    ]);
    expect(body.steps.find((s) => s.id === "call-back")?.attempt).toBe(1);
    expect((body.output as { slept: number }).slept).toBeGreaterThanOrEqual(10_000);

    // On time: from the run's start to its end within 1.5 s of the sleep's 10 s, by its stored times.
    const took = Date.parse(body.updatedAt) - Date.parse(body.createdAt);
    const sleep = body.steps.find((s) => s.id === "ten-seconds")!;
    const late = Date.parse(sleep.completedAt!) - (Date.parse(sleep.startedAt!) + 10_000);
    console.log(
      `[fresh app, next dev] a 10 s sleep: start → done ${took} ms (stored times); the sleep ended ${late} ms ` +
        `after its wake time; start request → callback ${callbacks[0]!.at - startedAt} ms`,
    );
    expect(late).toBeGreaterThanOrEqual(0);
    expect(took).toBeGreaterThanOrEqual(10_000);
    expect(took).toBeLessThan(11_500);
  }, 150_000);
});
