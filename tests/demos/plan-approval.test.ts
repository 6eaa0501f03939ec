// The plan-approval demo (app/workflows/plan-approval.ts) on the test harness: a plan journaled
// once, a decision by signal within 7 days, one refund step per item of the plan.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attachProviderDb } from "@/app/mock-providers/db";
import { planApproval } from "@/app/workflows/plan-approval";
import { ensureAppSchema } from "@/db/app-schema";
import { createTestDurable, type TestDurable } from "@/lib/durable/testing";

interface PlanItem {
  id: string;
  customer: string;
  chargeRef: string;
  amountCents: number;
}

let durable: TestDurable;
beforeAll(async () => {
  durable = await createTestDurable({
    workflows: [planApproval],
    async setup(db) {
      await ensureAppSchema(db);
      attachProviderDb(db);
    },
  });
});
afterAll(() => durable.close());

/** The plan as the run journaled it (its `plan` value step). */
async function journaledPlan(runId: string): Promise<PlanItem[]> {
  const { rows } = await sql<{ result: { items: PlanItem[] } }>`
    select result from durable_steps where run_id = ${runId} and step_id = 'plan'`.execute(durable.db);
  return rows[0]!.result.items;
}

describe("plan-approval", () => {
  it("executes exactly the journaled plan once approved, one refund step per item", async () => {
    const waiting = await durable.run(planApproval, {}, { id: "plan-approved" });
    expect(waiting).toMatchObject({ status: "waiting", waitingFor: { kind: "signal", name: "decision" } });
    const plan = await journaledPlan("plan-approved");
    expect(plan).toHaveLength(3);
    // The refunds are mocked for this run only, each with its own refund id.
    for (const item of plan) {
      durable.mockStep(`refund:${item.id}`, { result: { id: `re_${item.id}` } }, { runId: "plan-approved" });
    }

    await durable.signal({ runId: "plan-approved", name: "decision", payload: { approved: true, by: "grace" } });
    const done = await durable.drive("plan-approved");
    expect(done).toMatchObject({ status: "completed", output: { status: "executed", approvedBy: "grace" } });
    const output = done.output as { refunds: { customer: string; refundId: string }[] };
    expect(output.refunds).toEqual(
      plan.map((item) => ({ customer: item.customer, amount: expect.any(String), refundId: `re_${item.id}` })),
    );
    expect(done.steps.filter((step) => step.id.startsWith("refund:")).map((step) => step.status)).toEqual([
      "completed",
      "completed",
      "completed",
    ]);
  });

  it("refunds through the payment provider, once per item however often it fails", async () => {
    await durable.run(planApproval, {}, { id: "plan-provider" });
    await durable.signal({ runId: "plan-provider", name: "decision", payload: { approved: true } });
    const done = await durable.drive("plan-provider");
    expect(done).toMatchObject({ status: "completed", output: { status: "executed", approvedBy: null } });
    const { rows } = await sql<{ reference: string }>`
      select reference from mock_payments where run_id = 'plan-provider' and kind = 'refund'
      order by reference`.execute(durable.db);
    const plan = await journaledPlan("plan-provider");
    expect(rows.map((row) => row.reference)).toEqual(plan.map((item) => item.chargeRef).sort());
  });

  it("does nothing when rejected", async () => {
    await durable.run(planApproval, {}, { id: "plan-rejected" });
    await durable.signal({ runId: "plan-rejected", name: "decision", payload: { approved: false, by: "alan" } });
    const done = await durable.drive("plan-rejected");
    expect(done).toMatchObject({ status: "completed", output: { status: "rejected", by: "alan" } });
    expect(done.steps.map((step) => step.id)).toEqual(["plan", "decision"]);
  });

  it("expires after 7 days without a decision", async () => {
    await durable.run(planApproval, {}, { id: "plan-expired" });
    await durable.advanceClock("6d");
    expect(await durable.drive("plan-expired")).toMatchObject({ status: "waiting" });
    await durable.advanceClock("1d");
    expect(await durable.drive("plan-expired")).toMatchObject({ status: "completed", output: { status: "expired" } });
  });

  it("refuses a decision that does not match the declared schema", async () => {
    await durable.run(planApproval, {}, { id: "plan-bad-signal" });
    await expect(
      durable.signal({ runId: "plan-bad-signal", name: "decision", payload: { approved: "yes" } }),
    ).rejects.toMatchObject({ name: "InvalidInputError" });
    expect(await durable.drive("plan-bad-signal")).toMatchObject({ status: "waiting" });
  });
});
