// POST /api/durable/signal with `actor`: a decision on an approval (docs/guide/approvals.md), over
// the admin bearer or a signed webhook; 403 for an actor the approvers refuse, 409 once decided,
// 422 for a bad decision, each changing nothing.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { approvalDecision, defineWorkflow, TOOL_APPROVAL_SIGNAL } from "@/lib/durable";
import { refundAgent } from "../contract/tool-approvals-inbox-contract";
import { admin, createFixture, expectRefused, jsonRequest, type RouteFixture, signedSignal, url } from "./harness";

const release = defineWorkflow({
  name: "release",
  input: z.object({ author: z.string() }),
  signals: { go: approvalDecision },
  approvals: { go: { approvers: (actor, input) => actor !== input.author } },
  run: (ctx) => ctx.step.waitForSignal("go"),
});

let fx: RouteFixture;
beforeAll(async () => {
  fx = await createFixture({}, [release, refundAgent]);
});
afterAll(() => fx.durable.close());

let counter = 0;
async function waitingRun(): Promise<string> {
  const id = `release-${++counter}`;
  await fx.durable.start(release, { author: "olivia" }, { id });
  await fx.durable.advance(id);
  return id;
}
const decideRequest = (body: unknown) => jsonRequest(url("/signal"), body as Record<string, unknown>, admin);
const decisions = async () =>
  (await sql<any>`select count(*)::int as n from durable_approval_decisions`.execute(fx.db)).rows[0].n;

describe("POST /api/durable/signal: a decision", () => {
  it("takes a decision with the admin bearer (202), stores actor and reason, and advances the run", async () => {
    const runId = await waitingRun();
    const response = await fx.routes.signal.POST(
      decideRequest({ runId, name: "go", actor: "ann", approved: true, reason: "fine" }),
    );
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ ok: true, completed: true, approvals: 1, quorum: 1 });
    await fx.routes.idle();
    const status = await fx.durable.status(runId);
    expect(status?.status).toBe("completed");
    expect(status?.output).toEqual({ approved: true, actor: "ann", reason: "fine" });
  });

  it("takes a signed decision too", async () => {
    const runId = await waitingRun();
    const body = JSON.stringify({ runId, name: "go", actor: "bob", approved: false });
    const response = await fx.routes.signal.POST(signedSignal(body, { id: `evt-${runId}` }));
    expect(response.status).toBe(202);
    await fx.routes.idle();
    expect((await fx.durable.status(runId))?.output).toEqual({ approved: false, actor: "bob", reason: null });
  });

  it("refuses, changing nothing: 403 for a refused actor, 409 once decided, 422 for a bad decision", async () => {
    const runId = await waitingRun();
    const before = await decisions();
    await expectRefused(
      fx,
      () => fx.routes.signal.POST(decideRequest({ runId, name: "go", actor: "olivia", approved: true })),
      403,
      "not_an_approver",
    );
    await expectRefused(
      fx,
      () => fx.routes.signal.POST(decideRequest({ runId, name: "go", actor: "ann", approved: "yes" })),
      422,
      "invalid_input",
    );
    await expectRefused(
      fx,
      () => fx.routes.signal.POST(decideRequest({ runId, name: "go", actor: 7, approved: true })),
      422,
      "invalid_input",
    );
    await expectRefused(
      fx,
      () =>
        fx.routes.signal.POST(
          decideRequest({ runId, name: "go", payload: { approved: true, actor: "x", reason: null } }),
        ),
      422,
      "invalid_input",
    );
    expect(await decisions()).toBe(before);
    const first = await fx.routes.signal.POST(decideRequest({ runId, name: "go", actor: "ann", approved: true }));
    expect(first.status).toBe(202);
    await fx.routes.idle(); // the run resumed after the answer: the 409 below changes nothing
    await expectRefused(
      fx,
      () => fx.routes.signal.POST(decideRequest({ runId, name: "go", actor: "cat", approved: true })),
      409,
      "run_state_conflict",
    );
    expect(await decisions()).toBe(before + 1);
    await fx.routes.idle();
  });

  it("decides an agent's tool call with `toolCallId`: 202 once, 409 after, 422 for a bad id", async () => {
    const runId = `agent-${++counter}`;
    await fx.durable.start(refundAgent, { prompt: "refund both" }, { id: runId });
    await fx.durable.advance(runId);
    const before = await decisions();
    const decide = (extra: object) =>
      fx.routes.signal.POST(
        decideRequest({ runId, name: TOOL_APPROVAL_SIGNAL, actor: "ann", approved: false, ...extra }),
      );
    await expectRefused(fx, () => decide({ toolCallId: 7 }), 422, "invalid_input");
    await expectRefused(fx, () => decide({}), 422, "invalid_input");
    const response = await decide({ toolCallId: "call_1", reason: "no" });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ ok: true, completed: true, approvals: 0, quorum: 1 });
    await fx.routes.idle();
    await expectRefused(fx, () => decide({ toolCallId: "call_1" }), 409, "run_state_conflict");
    expect(await decisions()).toBe(before + 1);
    expect((await fx.durable.approvals({ workflow: "refund-agent" })).approvals.map((a) => a.toolCallId)).toEqual([
      "call_2",
    ]);
  });
});
