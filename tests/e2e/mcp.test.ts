// The reference app's MCP route (app/api/durable/mcp/route.ts, docs/guide/mcp.md) under the built
// app's `next start`, driven by the MCP SDK's own client over real HTTP, with no cron running:
// the tools listed, a call answered with its run's output, a call as a task that waits on a signal
// (input_required) and completes once signalled, tasks/cancel, and a refused caller that starts nothing.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/until";
import { DurableClient, makeSecrets } from "./helpers/durable-client";
import { buildApp, type NextServer, startNext } from "./helpers/next-server";

beforeAll(async () => {
  await buildApp();
}, 240_000);

describe("the MCP route under next start (PGlite)", () => {
  const secrets = makeSecrets();
  const cwd = mkdtempSync(path.join(os.tmpdir(), "durable-e2e-mcp-"));
  let server: NextServer | undefined;
  let durable: DurableClient;
  const clients: Client[] = [];

  async function connectAs(bearer: string): Promise<Client> {
    const client = new Client({ name: "e2e", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server!.url}/api/durable/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${bearer}` } },
      }),
    );
    clients.push(client);
    return client;
  }
  const runCount = async () => {
    const response = await fetch(`${server!.url}/api/durable/runs`, {
      headers: { authorization: `Bearer ${secrets.env.DURABLE_SECRET}` },
    });
    return ((await response.json()) as { runs: unknown[] }).runs.length;
  };

  beforeAll(async () => {
    server = await startNext({ cwd, env: { ...secrets.env, DATABASE_URL: undefined, DURABLE_DRIVER: undefined } });
    durable = new DurableClient(server.url, secrets.env.DURABLE_SECRET, secrets.signalKey);
    // The first request opens and migrates PGlite: here, under the hook's timeout.
    expect(await runCount()).toBe(0);
  }, 120_000);

  afterEach(async (context) => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    if (context.task.result?.state === "fail" && server)
      console.log(`next start output:\n${server.output().slice(-4000)}`);
  });

  afterAll(async () => {
    await server?.stop();
    rmSync(cwd, { recursive: true, force: true });
  });

  it("refuses a caller without the admin bearer (401) and starts nothing", async () => {
    const response = await fetch(`${server!.url}/api/durable/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hello", arguments: {} } }),
    });
    expect(response.status).toBe(401);
    await expect(connectAs("wrong")).rejects.toThrow();
    expect(await runCount()).toBe(0);
  });

  it("lists the workflows and the operator tools, and a call answers its run's output", async () => {
    const client = await connectAs(secrets.env.DURABLE_SECRET);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      "hello",
      "approval",
      "runs_list",
      "runs_get",
      "runs_cancel",
      "runs_retry",
      "runs_fork",
    ]);
    expect(tools[1]!.inputSchema).toMatchObject({ type: "object", required: ["docId"] });
    const result = await client.callTool({ name: "hello", arguments: { name: "MCP" } });
    expect(result.structuredContent).toMatchObject({ greeting: "Hello, MCP!" });
  });

  it("a call as a task is the run: input_required on its signal, completed once signalled", async () => {
    const client = await connectAs(secrets.env.DURABLE_SECRET);
    const { task } = await client.request(
      { method: "tools/call", params: { name: "approval", arguments: { docId: "doc-1" }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    await until(async () => (await client.experimental.tasks.getTask(task.taskId)).status === "input_required");
    const signalled = await durable.signal(task.taskId, "decision", { approved: true, by: "e2e" });
    expect(signalled.http).toBe(202);
    // The run cools off 5 s after the decision; tasks/result waits for its end inside the request.
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, {
      timeout: 30_000,
    });
    expect(result.structuredContent).toMatchObject({ docId: "doc-1", approved: true, by: "e2e" });
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe("completed");
  }, 60_000);

  it("tasks/cancel cancels the run", async () => {
    const client = await connectAs(secrets.env.DURABLE_SECRET);
    const { task } = await client.request(
      { method: "tools/call", params: { name: "approval", arguments: { docId: "doc-2" }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    expect(await client.experimental.tasks.cancelTask(task.taskId)).toMatchObject({ status: "cancelled" });
    const read = await client.callTool({ name: "runs_get", arguments: { id: task.taskId } });
    expect(read.structuredContent).toMatchObject({ id: task.taskId, status: "cancelled" });
  });
});
