// The outbox demo (app/workflows/outbox-delivery.ts) on the test harness: messages queued exactly
// once, each sent with retries and backoff, then marked sent.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attachProviderDb } from "@/app/mock-providers/db";
import { outboxDelivery } from "@/app/workflows/outbox-delivery";
import { ensureAppSchema } from "@/db/app-schema";
import { FatalStepError } from "@/lib/durable";
import { createTestDurable, type TestDurable } from "@/lib/durable/testing";

let durable: TestDurable;
beforeAll(async () => {
  durable = await createTestDurable({
    workflows: [outboxDelivery],
    // Every retry delay parks the run, so the test moves the clock instead of waiting it out.
    defaults: { inProcessWait: 0 },
    async setup(db) {
      await ensureAppSchema(db);
      attachProviderDb(db);
    },
  });
});
afterAll(() => durable.close());

async function outbox(runId: string) {
  const { rows } = await sql<{ message_key: string; status: string; provider_message_id: string | null }>`
    select message_key, status, provider_message_id from demo_outbox where run_id = ${runId}
    order by position`.execute(durable.db);
  return rows;
}

/** How long after its failure a waiting retry is due, from its row. */
async function retryDelayMs(runId: string, stepId: string): Promise<number> {
  const { rows } = await sql<{ ms: number }>`
    select (extract(epoch from wake_at - updated_at) * 1000)::int as ms from durable_steps
     where run_id = ${runId} and step_id = ${stepId} and status = 'waiting'`.execute(durable.db);
  return rows[0]!.ms;
}

async function wakeAtOf(runId: string, stepId: string): Promise<string> {
  const { rows } = await sql<{ wake_at: Date }>`
    select wake_at from durable_steps where run_id = ${runId} and step_id = ${stepId}`.execute(durable.db);
  return rows[0]!.wake_at.toISOString();
}

describe("outbox-delivery", () => {
  it("retries a send that fails twice, with its backoff, then marks every message sent", async () => {
    const runId = "outbox-flaky";
    durable.mockStep("deliver:welcome", { error: "503 upstream mail server unavailable" }, { runId });
    durable.mockStep("deliver:verify-email", { result: { messageId: "em_verify", deduped: false } }, { runId });
    durable.mockStep("deliver:invoice", { result: { messageId: "em_invoice", deduped: false } }, { runId });

    const first = await durable.run(outboxDelivery, {}, { id: runId });
    expect(first).toMatchObject({ status: "waiting", waitingFor: { kind: "retry", name: "deliver:welcome" } });
    expect(first.steps.find((step) => step.id === "deliver:welcome")).toMatchObject({
      status: "waiting",
      attempt: 1,
      error: { message: "503 upstream mail server unavailable" },
    });
    expect((await outbox(runId)).map((row) => row.status)).toEqual(["queued", "queued", "queued"]);

    // The first retry is due 1 s after the failure was recorded, by the database clock. (Checked in
    // the row: the database clock also moves in real time, so a drive at +900 ms would find it due
    // whenever the machine took 100 ms between the failure and that drive.)
    expect(await retryDelayMs(runId, "deliver:welcome")).toBe(1000);
    expect(first.wakeAt).toBe(await wakeAtOf(runId, "deliver:welcome"));
    await durable.advanceClock("1s");
    const second = await durable.drive(runId);
    expect(second).toMatchObject({ status: "waiting", waitingFor: { kind: "retry", name: "deliver:welcome" } });
    expect(second.steps.find((step) => step.id === "deliver:welcome")).toMatchObject({ attempt: 2 });

    // The provider recovers; the second retry comes 2 s after the second failure.
    expect(await retryDelayMs(runId, "deliver:welcome")).toBe(2000);
    durable.mockStep("deliver:welcome", { result: { messageId: "em_welcome", deduped: false } }, { runId });
    await durable.advanceClock("2s");
    const done = await durable.drive(runId);
    expect(done).toMatchObject({
      status: "completed",
      output: {
        delivered: 3,
        messageIds: { welcome: "em_welcome", "verify-email": "em_verify", invoice: "em_invoice" },
      },
    });
    expect(done.steps.find((step) => step.id === "deliver:welcome")).toMatchObject({ status: "completed", attempt: 3 });
    expect(await outbox(runId)).toEqual([
      { message_key: "welcome", status: "sent", provider_message_id: "em_welcome" },
      { message_key: "verify-email", status: "sent", provider_message_id: "em_verify" },
      { message_key: "invoice", status: "sent", provider_message_id: "em_invoice" },
    ]);
  });

  it("sends through the flaky provider: every message once, however many attempts it took", async () => {
    const runId = "outbox-provider";
    let status = await durable.run(outboxDelivery, { email: "ada@example.com" }, { id: runId });
    // Each retry delay (at most 8 s, or a 1.5 s retry-after) parks the run: move the clock past it.
    for (let i = 0; i < 30 && status.status === "waiting"; i++) {
      await durable.advanceClock("8s");
      status = await durable.drive(runId);
    }
    expect(status).toMatchObject({ status: "completed", output: { to: "ada@example.com", delivered: 3 } });
    const { rows } = await sql<{ subject: string }>`
      select subject from mock_email_messages where run_id = ${runId} order by subject`.execute(durable.db);
    expect(rows.map((row) => row.subject)).toEqual([
      "Confirm your email address",
      "Welcome aboard",
      "Your first invoice",
    ]);
    expect((await outbox(runId)).every((row) => row.status === "sent")).toBe(true);
    // The provider did fail on the way (its plan for these keys), some of it after accepting a message.
    const requests = await sql<{ outcome: string }>`
      select outcome from mock_provider_requests where run_id = ${runId} and provider = 'email'`.execute(durable.db);
    const outcomes = requests.rows.map((row) => row.outcome);
    // A send whose response was lost had created the message: its retry was deduplicated.
    const lost = outcomes.filter((outcome) => outcome === "lost_response").length;
    expect(lost).toBeGreaterThan(0);
    expect(outcomes.filter((outcome) => outcome === "deduped")).toHaveLength(lost);
    expect(outcomes.filter((outcome) => outcome === "created")).toHaveLength(3 - lost);
  });

  it("fails the run when a send is refused for good, leaving the rest queued", async () => {
    const runId = "outbox-refused";
    durable.mockStep("deliver:welcome", { error: new FatalStepError("422 invalid recipient") }, { runId });
    const done = await durable.run(outboxDelivery, {}, { id: runId });
    expect(done).toMatchObject({ status: "failed", error: { message: "422 invalid recipient" } });
    expect(done.steps.find((step) => step.id === "deliver:welcome")).toMatchObject({ status: "failed", attempt: 1 });
    expect((await outbox(runId)).map((row) => row.status)).toEqual(["queued", "queued", "queued"]);
  });
});
