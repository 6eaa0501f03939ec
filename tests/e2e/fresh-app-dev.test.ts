// A fresh app made by `add-to-app`, under `next dev` on its embedded PGlite, ticks by itself: a run
// that sleeps 10 seconds completes with nobody reading its status, because the instrumentation.ts
// add-to-app wrote starts the local cron. The workflow's last step calls back into this test, so
// the test learns the run finished without asking the app about it.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DurableClient, makeSecrets } from "./helpers/durable-client";
import { addToApp, writeMinimalApp } from "./helpers/fresh-app";
import { startNextDev, type NextServer } from "./helpers/next-server";

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
    const ms = Date.parse(body.updatedAt) - Date.parse(body.createdAt);
    console.log(`[measure] stored start→done ${ms} ms; wall start→callback ${callbacks[0]!.at - startedAt} ms`);
    expect(body.steps.map((s) => [s.id, s.status])).toEqual([
      ["before", "completed"],
      ["ten-seconds", "completed"],
      ["call-back", "completed"],
    ]);
    expect(body.steps.find((s) => s.id === "call-back")?.attempt).toBe(1);
    expect((body.output as { slept: number }).slept).toBeGreaterThanOrEqual(10_000);
  }, 150_000);
});
