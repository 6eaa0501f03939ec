// createMcpRoute (docs/guide/mcp.md), driven by the MCP SDK's own client over HTTP (its Streamable
// HTTP client transport, whose fetch is the route's handler): workflows listed as tools with their
// zod input as JSON Schema, a call that answers its run's output, a call as a task whose id is the
// run id, tasks/get that heals a dead run, input_required for a signal wait, tasks/cancel, the
// operator tools, and refusals that change nothing.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Kysely } from "kysely";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { createMcpRoute, type McpAccess } from "@/lib/durable/mcp";
import { claimDueRun } from "@/lib/durable/store/claim-run";
import { resetDurableTables } from "../helpers/databases";

const add = defineWorkflow({
  name: "add",
  input: z.object({ a: z.number(), b: z.number().int() }),
  async run(ctx, { a, b }) {
    const sum = await ctx.step.run("sum", () => a + b);
    return { sum };
  },
});
const approve = defineWorkflow({
  name: "approve",
  input: z.object({ amount: z.number() }),
  signals: { decision: z.object({ ok: z.boolean() }) },
  async run(ctx, { amount }) {
    const decision = await ctx.step.waitForSignal("decision");
    return { amount, approved: decision?.ok ?? false };
  },
});
const hidden = defineWorkflow({ name: "hidden", input: z.object({}), run: async () => "hidden" });

const ADMIN = "Bearer mcp-admin";
const AGENT = "Bearer mcp-agent";
/** The app's check: the admin bearer may operate, the agent's may call the workflows. */
const authorize = (request: Request): McpAccess => {
  const bearer = request.headers.get("authorization");
  return bearer === ADMIN ? true : bearer === AGENT ? "workflows" : false;
};

export function runMcpContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`the MCP route on ${label}`, () => {
    let db: Kysely<any>;
    let durable: Durable;
    const route = createMcpRoute(async () => durable, { workflows: [add, approve], authorize });
    const clients: Client[] = [];

    /** The route as a fetch: each request goes to its method's handler. */
    const fetchRoute = (url: string | URL, init?: RequestInit) => {
      const request = new Request(url, init);
      return route.handlers[request.method as "POST"](request);
    };
    async function connectAs(authorization: string): Promise<Client> {
      const client = new Client({ name: "contract", version: "1" });
      const transport = new StreamableHTTPClientTransport(new URL("http://app.test/api/durable/mcp"), {
        fetch: fetchRoute,
        requestInit: { headers: { authorization } },
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    }
    const runCount = async () => (await durable.list()).runs.length;
    const callAsTask = (client: Client, name: string, args: Record<string, unknown>) =>
      client.request(
        { method: "tools/call", params: { name, arguments: args, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );

    beforeAll(async () => {
      db = await open();
      durable = createDurable({
        db,
        workflows: [add, approve, hidden],
        secrets: { durable: "test-secret" },
        defaults: { lease: "2s" },
      });
      await durable.migrate();
    });
    afterAll(async () => {
      await durable?.close();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
    });
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((client) => client.close()));
      await route.idle();
    });

    it("refuses to mount without authorize, and a workflow MCP cannot offer", () => {
      expect(() => createMcpRoute(async () => durable, { workflows: [add] } as never)).toThrow(/authorize/);
      const text = defineWorkflow({ name: "text", input: z.string(), run: async () => 1 });
      expect(() => createMcpRoute(async () => durable, { workflows: [text], authorize })).toThrow(/z\.object/);
      const spaced = defineWorkflow({ name: "a b", input: z.object({}), run: async () => 1 });
      expect(() => createMcpRoute(async () => durable, { workflows: [spaced], authorize })).toThrow(/tool name/);
      const clash = defineWorkflow({ name: "runs_list", input: z.object({}), run: async () => 1 });
      expect(() => createMcpRoute(async () => durable, { workflows: [clash], authorize })).toThrow(/two tools/);
    });

    it("answers 401 to a request authorize refuses, and starts nothing", async () => {
      const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } };
      for (const authorization of [undefined, "Bearer wrong"]) {
        const response = await fetchRoute("http://app.test/api/durable/mcp", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...(authorization ? { authorization } : {}),
          },
          body: JSON.stringify(call),
        });
        expect(response.status).toBe(401);
      }
      await expect(connectAs("Bearer wrong")).rejects.toThrow();
      expect(await runCount()).toBe(0);
    });

    it("answers 413 to a body over the cap and 405 to GET, starting nothing", async () => {
      const padding = "x".repeat(300 * 1024);
      const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "add", arguments: { padding } } };
      const response = await fetchRoute("http://app.test/api/durable/mcp", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: ADMIN,
        },
        body: JSON.stringify(call),
      });
      expect(response.status).toBe(413);
      const get = await fetchRoute("http://app.test/api/durable/mcp", { headers: { authorization: ADMIN } });
      expect(get.status).toBe(405);
      expect(await runCount()).toBe(0);
    });

    it("lists each workflow as a tool with its zod input as JSON Schema; operator tools for an operator", async () => {
      const agent = await connectAs(AGENT);
      const { tools } = await agent.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(["add", "approve"]);
      expect(tools[0]).toMatchObject({
        name: "add",
        inputSchema: {
          type: "object",
          properties: { a: { type: "number" }, b: { type: "integer" } },
          required: ["a", "b"],
        },
        execution: { taskSupport: "optional" },
      });
      const admin = await connectAs(ADMIN);
      expect((await admin.listTools()).tools.map((tool) => tool.name)).toEqual([
        "add",
        "approve",
        "runs_list",
        "runs_get",
        "runs_cancel",
        "runs_retry",
        "runs_fork",
      ]);
    });

    it("a call is a run: it answers the run's output when the run ends within the request", async () => {
      const client = await connectAs(AGENT);
      const result = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
      expect(result).toMatchObject({ structuredContent: { sum: 5 }, content: [{ type: "text", text: '{"sum":5}' }] });
      const { runs } = await durable.list();
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ workflow: "add", status: "completed" });
    });

    it("checks a call's input as start does: InvalidParams with zod's issues, and no run", async () => {
      const client = await connectAs(AGENT);
      for (const args of [{ a: 1, b: 1.5 }, { a: "1", b: 1 }, {}]) {
        const error = await client.callTool({ name: "add", arguments: args }).catch((e) => e);
        expect(error).toBeInstanceOf(McpError);
        expect(error).toMatchObject({ code: -32602, data: { code: "invalid_input", issues: expect.any(Array) } });
        // The toolkit's words, prefixed once (by the client).
        expect(error.message).toBe('MCP error -32602: the input of workflow "add" is invalid');
      }
      await expect(client.callTool({ name: "hidden", arguments: {} })).rejects.toMatchObject({ code: -32602 });
      expect(await runCount()).toBe(0);
    });

    it("a call without a task whose run waits answers the run id, and the task reads it", async () => {
      const client = await connectAs(AGENT);
      const result = await client.callTool({ name: "approve", arguments: { amount: 7 } });
      const { runId } = result.structuredContent as { runId: string };
      expect(result.structuredContent).toEqual({ runId, status: "waiting" });
      expect((await client.experimental.tasks.getTask(runId)).status).toBe("input_required");
    });

    it("a call as a task answers a task whose id is the run id; a signal wait is input_required", async () => {
      const client = await connectAs(AGENT);
      const { task } = await callAsTask(client, "approve", { amount: 40 });
      expect(task).toMatchObject({ status: "working", ttl: null });
      expect((await durable.status(task.taskId))!.workflow).toBe("approve");
      await route.idle(); // the advance after the answer parks the run on its signal
      const waiting = await client.experimental.tasks.getTask(task.taskId);
      expect(waiting).toMatchObject({ taskId: task.taskId, status: "input_required" });
      expect(waiting.statusMessage).toMatch(/signal "decision"/);
      // Its result is not there yet: the call says so at once rather than wait on a person.
      await expect(client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).rejects.toMatchObject({
        data: { code: "run_not_ended" },
      });
      await durable.signal({ runId: task.taskId, name: "decision", payload: { ok: true } });
      // Delivered, the run is due: working again (and this read advances it after the answer).
      expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe("working");
      // tasks/result advances it inside the request too (whichever claims first), and answers its end.
      const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      expect(result.structuredContent).toEqual({ amount: 40, approved: true });
      expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe("completed");
    });

    it("tasks/get heals a run whose owner died: its lease ran out, and the read puts it back and runs it", async () => {
      const client = await connectAs(AGENT);
      const { id } = await durable.start(add, { a: 20, b: 22 });
      const dead = await claimDueRun(db as never, { workflows: ["add"], leaseMs: 2_000 });
      expect(dead?.run.id).toBe(id);
      expect((await client.experimental.tasks.getTask(id)).status).toBe("working");
      expect((await durable.events(id)).filter((e) => e.kind === "heal")).toHaveLength(0);
      await durable.testing.advanceClock("3s");
      expect((await client.experimental.tasks.getTask(id)).status).toBe("working");
      expect((await durable.events(id)).filter((e) => e.kind === "heal")).toHaveLength(1);
      await route.idle();
      expect(await client.experimental.tasks.getTask(id)).toMatchObject({ taskId: id, status: "completed" });
      const result = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
      expect(result.structuredContent).toEqual({ sum: 42 });
    });

    it("tasks/cancel cancels the run; a task that ended is refused and unchanged", async () => {
      const client = await connectAs(AGENT);
      const { task } = await callAsTask(client, "approve", { amount: 1 });
      await route.idle();
      const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
      expect(cancelled).toMatchObject({ taskId: task.taskId, status: "cancelled" });
      expect((await durable.status(task.taskId))!.status).toBe("cancelled");
      const before = await durable.events(task.taskId);
      await expect(client.experimental.tasks.cancelTask(task.taskId)).rejects.toMatchObject({ code: -32602 });
      expect(await durable.events(task.taskId)).toEqual(before);
      const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      expect(result).toMatchObject({ isError: true });
    });

    it("a task of another workflow, or of no run, is not found for a caller of the workflows", async () => {
      const client = await connectAs(AGENT);
      const { id } = await durable.start(hidden, {});
      for (const taskId of [id, "no-such-run", "\u0000"]) {
        await expect(client.experimental.tasks.getTask(taskId)).rejects.toMatchObject({ code: -32602 });
        await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toMatchObject({ code: -32602 });
      }
      expect((await durable.status(id))!.status).toBe("pending");
      await expect(client.callTool({ name: "runs_cancel", arguments: { id } })).rejects.toMatchObject({
        data: { code: "tool_not_found" },
      });
      expect((await durable.status(id))!.status).toBe("pending");
    });

    it("the operator tools list, read, cancel, retry and fork runs", async () => {
      const admin = await connectAs(ADMIN);
      const done = await admin.callTool({ name: "add", arguments: { a: 1, b: 1 } });
      expect(done.structuredContent).toEqual({ sum: 2 });
      const { id } = await durable.start(hidden, {});
      const list = await admin.callTool({ name: "runs_list", arguments: { workflow: "add" } });
      const runs = (list.structuredContent as { runs: { id: string; workflow: string }[] }).runs;
      expect(runs.map((run) => run.workflow)).toEqual(["add"]);
      const read = await admin.callTool({ name: "runs_get", arguments: { id: runs[0]!.id } });
      expect(read.structuredContent).toMatchObject({ status: "completed", output: { sum: 2 } });
      const fork = await admin.callTool({ name: "runs_fork", arguments: { id: runs[0]!.id, fromStep: "sum" } });
      const forkId = (fork.structuredContent as { id: string }).id;
      await route.idle();
      expect(await durable.status(forkId)).toMatchObject({
        status: "completed",
        output: { sum: 2 },
        forkedFrom: { runId: runs[0]!.id, stepId: "sum" },
      });
      const cancelled = await admin.callTool({ name: "runs_cancel", arguments: { id, reason: "not needed" } });
      expect(cancelled.structuredContent).toMatchObject({ id, status: "cancelled" });
      // retry takes a failed run only: a cancelled one is a conflict, and stays as it is.
      await expect(admin.callTool({ name: "runs_retry", arguments: { id } })).rejects.toMatchObject({
        code: -32600,
        data: { code: "run_state_conflict" },
      });
      await expect(admin.callTool({ name: "runs_get", arguments: { id: "nope" } })).rejects.toMatchObject({
        data: { code: "run_not_found" },
      });
      await expect(admin.callTool({ name: "runs_get", arguments: { id: 5 } })).rejects.toMatchObject({
        data: { code: "invalid_input" },
      });
      await expect(admin.callTool({ name: "runs_list", arguments: { limit: 0 } })).rejects.toMatchObject({
        data: { code: "invalid_input" },
      });
    });
  });
}
