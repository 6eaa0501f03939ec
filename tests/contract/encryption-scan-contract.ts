// Encryption at rest, seen from the database alone (docs/guide/encryption.md, "What someone with
// the database alone learns"): one suite run on every database. A run that touches every kind of
// payload (input, a step's result, a step's error, a signal, a callback, a stream, the run's output;
// another run's error, a cancel's reason, an approval's reasons and a tool approval's reason
// (docs/guide/approvals.md); the
// input of each one's onComplete / onFailure hook, which copies its output or error; a chat turn
// through the ai wing, its answer streamed by the mock model) leaves no row of any durable_% table
// holding one of its plaintext markers when the instance encrypts, and every reader still answers
// plain values. With encryption off, the same scan finds them: the scan can fail.
import { randomBytes } from "node:crypto";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { convertToModelMessages, type UIMessage } from "ai";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { sql } from "kysely";
import {
  createDurable,
  type Durable,
  defineWorkflow,
  type EncryptionKey,
  FatalStepError,
  InvalidInputError,
  type LifecycleInput,
  lifecycleInput,
} from "@/lib/durable";
import { chatTurnInput, loadChat, startChatTurn } from "@/lib/durable/ai";
import { resetDurableTables } from "../helpers/databases";
import { refundAgent } from "./tool-approvals-inbox-contract";
import { type MockModelServer, startMockModelServer } from "../helpers/mock-model-server";
import { scanForPlaintext, textColumns } from "../helpers/plaintext-scan";

/** One marker per kind of payload: random, so no ciphertext holds one by chance. */
const tag = randomBytes(6).toString("hex");
const MARK = {
  input: `INPUTmark${tag}`,
  result: `RESULTmark${tag}`,
  stepError: `STEPERRORmark${tag}`,
  stream: `STREAMmark${tag}`,
  signal: `SIGNALmark${tag}`,
  callback: `CALLBACKmark${tag}`,
  output: `OUTPUTmark${tag}`,
  runError: `RUNERRORmark${tag}`,
  cancel: `CANCELmark${tag}`,
  chat: `CHATmark${tag}`,
  event: `EVENTmark${tag}`,
  reason: `REASONmark${tag}`,
  edit: `EDITmark${tag}`,
  editReason: `EDITREASONmark${tag}`,
};
const markers = Object.values(MARK);

let modelServer: MockModelServer;
/** The callback token each run handed out, by run id (what a mailer would have sent). */
const tokens = new Map<string, string>();

// The hook of the runs below (docs/guide/lifecycle.md): its input holds their output or error,
// copied by the trigger as stored; it returns what it saw, so its own output holds it too.
const ended = defineWorkflow({
  name: "enc-ended",
  input: lifecycleInput,
  run: (ctx, input) => ctx.step.run("saw", () => input),
});

const everything = defineWorkflow({
  name: "enc-everything",
  input: z.object({ secret: z.string() }),
  onComplete: ended,
  signals: { note: z.object({ text: z.string() }) },
  async run(ctx, input) {
    const result = await ctx.step.run("result", () => ({ echo: `${MARK.result} of ${input.secret}` }));
    const failed = await ctx.step
      .run("fails", (): string => {
        throw new FatalStepError(`the step failed: ${MARK.stepError}`);
      })
      .catch((error: Error) => error.message);
    await ctx.step.run("streams", async () => {
      const out = ctx.stream("streams");
      out.write({ text: MARK.stream });
      out.write(`a plain string chunk: ${MARK.stream}`);
      await out.flush();
    });
    const note = await ctx.step.waitForSignal("note", { timeout: "1h" });
    const callback = await ctx.step.callback("answer", { timeout: "1h", schema: z.object({ text: z.string() }) });
    await ctx.step.run("mail", () => void tokens.set(ctx.runId, callback.token));
    const answer = await ctx.step.waitForCallback(callback);
    return { output: MARK.output, result, failed, note, answer };
  },
});

const failing = defineWorkflow({
  name: "enc-failing",
  input: z.object({}),
  onFailure: ended,
  async run(ctx) {
    await ctx.step.run("boom", (): string => {
      throw new FatalStepError(`the run failed: ${MARK.runError}`);
    });
  },
});

// An event's data: stored with the event, as the run's input, and (waitForEvent) as a receipt.
const subscriber = defineWorkflow({
  name: "enc-subscriber",
  on: "enc.event",
  input: z.object({ secret: z.string() }),
  run: async (_ctx, input) => ({ got: input.secret.length }),
});

// Waits for an event: answered by the publish (parked first) or by its own read (since "run").
const eventWaiter = defineWorkflow({
  name: "enc-event-waiter",
  input: z.object({ ticket: z.string() }),
  run: (ctx, input) => ctx.step.waitForEvent("got", "enc.reply", { match: { ticket: input.ticket }, since: "run" }),
});

const parked = defineWorkflow({
  name: "enc-parked",
  input: z.object({}),
  onFailure: ended,
  signals: { never: z.object({}) },
  run: (ctx) => ctx.step.waitForSignal("never", { timeout: "1h" }),
});

const chat = defineWorkflow({
  name: "enc-chat",
  input: chatTurnInput,
  async run(ctx, input) {
    const model = createOpenAICompatible({ baseURL: modelServer.url, name: "mock", includeUsage: true })("mock");
    const messages = await convertToModelMessages(input.messages);
    const answer = await ctx.step.ai.agent("answer", { model, messages, stream: true, maxSteps: 2 });
    return { text: answer.text };
  },
});

/** A value with "@" made the stream's marker and "%" the envelope prefix: the run's input holds neither. */
const fromTemplate = (value: unknown): unknown =>
  JSON.parse(
    JSON.stringify(value)
      .replaceAll("@", () => MARK.stream)
      .replaceAll("%", () => "$denc1."),
  );

/** Writes the chunks of its input (fromTemplate), each a value of `ctx.stream`; reports what a write threw. */
const streamer = defineWorkflow({
  name: "enc-streamer",
  input: z.object({ chunks: z.array(z.unknown()) }),
  async run(ctx, input) {
    return ctx.step.run("say", async () => {
      const out = ctx.stream("say");
      try {
        for (const chunk of input.chunks) out.write(fromTemplate(chunk));
      } catch (error) {
        // Not the message itself: without a key, a result holding the prefix is refused too.
        return { refused: (error as Error).name, namesPrefix: (error as Error).message.includes('"$denc1."') };
      }
      await out.flush();
      return { refused: null };
    });
  },
});

// Two approvers: the first's reason stays only in durable_approval_decisions, the second's also
// reaches the mailbox, the receipt and the output.
const approval = defineWorkflow({
  name: "enc-approval",
  input: z.object({}),
  approvals: { ship: { quorum: 2 } },
  run: (ctx) => ctx.step.waitForSignal("ship"),
});

const user = (id: string, text: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] });

/** Runs the workflows above to their ends on `durable` and checks every reader answers plain values. */
async function exerciseEverything(durable: Durable): Promise<void> {
  const { id } = await durable.start(everything, { secret: MARK.input }, { id: "everything" });
  expect(await durable.advance(id)).toBe("waiting");
  await durable.signal({ runId: id, name: "note", payload: { text: MARK.signal } });
  expect(await durable.advance(id)).toBe("waiting");
  expect((await durable.completeCallback(tokens.get(id)!, { text: MARK.callback })).delivered).toBe(true);
  expect(await durable.advance(id)).toBe("completed");
  const done = await durable.status(id);
  expect(done!.output).toEqual({
    output: MARK.output,
    result: { echo: `${MARK.result} of ${MARK.input}` },
    failed: `the step failed: ${MARK.stepError}`,
    note: { text: MARK.signal },
    answer: { text: MARK.callback },
  });
  const stream = await durable.readStream(id);
  expect(stream!.chunks.map((chunk) => chunk.data)).toEqual([
    { text: MARK.stream },
    `a plain string chunk: ${MARK.stream}`,
  ]);

  await durable.start(failing, {}, { id: "failing" });
  expect(await durable.advance("failing")).toBe("failed");
  expect((await durable.status("failing"))!.error!.message).toContain(MARK.runError);

  // A fork that edits the failed step's receipt (docs/guide/edit-and-resume.md): the value and the
  // reason are sealed under the fork's id; its ledger and its timeline read them plain.
  await durable.fork("failing", {
    fromStep: "boom",
    id: "failing-edited",
    overrides: { boom: MARK.edit },
    reason: `edited: ${MARK.editReason}`,
  });
  expect(await durable.advance("failing-edited")).toBe("completed");
  const edited = (await durable.status("failing-edited", { ledger: true }))!;
  expect(edited.steps.find((step) => step.id === "boom")!.result).toBe(MARK.edit);
  const editEvent = (await durable.events("failing-edited")).find((event) => event.kind === "step.edited");
  expect(editEvent!.data.reason).toBe(`edited: ${MARK.editReason}`);

  await durable.start(parked, {}, { id: "parked" });
  expect(await durable.advance("parked")).toBe("waiting");
  await durable.cancel("parked", { reason: `stopped: ${MARK.cancel}` });
  expect((await durable.status("parked"))!.error!.message).toBe(`stopped: ${MARK.cancel}`);
  const cancelEvent = (await durable.events("parked")).find((event) => event.kind === "cancel");
  expect(cancelEvent!.data.reason).toBe(`stopped: ${MARK.cancel}`);

  // Each end started its hook with the ended run's output or error: the hook sees them plain.
  const expected = { everything: MARK.output, failing: MARK.runError, parked: MARK.cancel };
  for (const [parent, marker] of Object.entries(expected)) {
    const [hook] = (await durable.list({ parentId: parent })).runs;
    expect(await durable.advance(hook!.id)).toBe("completed");
    const saw = (await durable.status(hook!.id))!.output as LifecycleInput;
    expect(saw.id).toBe(parent);
    expect(JSON.stringify(saw.output ?? saw.error)).toContain(marker);
  }

  const published = await durable.publish("enc.event", { secret: MARK.event }, { id: "enc-event-1" });
  expect(published.runs).toEqual([{ workflow: "enc-subscriber", id: "event:enc-subscriber/enc-event-1" }]);
  expect(await durable.advance(published.runs[0]!.id)).toBe("completed");
  expect((await durable.status(published.runs[0]!.id))!.output).toEqual({ got: MARK.event.length });

  // Parked, then answered by the publish's statement; and answered by its own read of the events.
  await durable.start(eventWaiter, { ticket: "t-parked" }, { id: "waiter-parked" });
  expect(await durable.advance("waiter-parked")).toBe("waiting");
  await durable.publish("enc.reply", { ticket: "t-parked", text: MARK.event }, { id: "enc-reply-1" });
  expect(await durable.advance("waiter-parked")).toBe("completed");
  expect((await durable.status("waiter-parked"))!.output).toEqual({ ticket: "t-parked", text: MARK.event });
  await durable.start(eventWaiter, { ticket: "t-read" }, { id: "waiter-read" });
  await durable.publish("enc.reply", { ticket: "t-read", text: MARK.event }, { id: "enc-reply-2" });
  expect(await durable.advance("waiter-read")).toBe("waiting"); // its suspension finds the event: due now
  expect(await durable.advance("waiter-read")).toBe("completed");
  expect((await durable.status("waiter-read"))!.output).toEqual({ ticket: "t-read", text: MARK.event });

  await durable.start(approval, {}, { id: "approval" });
  expect(await durable.advance("approval")).toBe("waiting");
  await durable.decide({ runId: "approval", name: "ship", actor: "ann", approved: true, reason: `1 ${MARK.reason}` });
  const [pending] = (await durable.approvals({ workflow: "enc-approval" })).approvals;
  expect(pending!.decisions.map((d) => d.reason)).toEqual([`1 ${MARK.reason}`]);
  await durable.decide({ runId: "approval", name: "ship", actor: "bob", approved: true, reason: `2 ${MARK.reason}` });
  expect(await durable.advance("approval")).toBe("completed");
  expect((await durable.status("approval"))!.output).toEqual({
    approved: true,
    actor: "bob",
    reason: `2 ${MARK.reason}`,
  });

  // An agent's tool calls decided from the inbox: the reason in the decision row, the delivery, the
  // wait's receipt, the denied call's step and the model's next prompt (so the run's output).
  await durable.start(refundAgent, { prompt: "refund" }, { id: "agent" });
  expect(await durable.advance("agent")).toBe("waiting");
  const calls = (await durable.approvals({ workflow: "refund-agent" })).approvals;
  expect(calls.map((c) => [c.kind, c.toolCallId, c.input])).toEqual([
    ["tool", "call_1", { orderId: "1" }],
    ["tool", "call_2", { orderId: "2" }],
  ]);
  for (const call of calls) {
    const reason = `tool ${MARK.reason}`;
    await durable.decide({
      runId: "agent",
      name: call.name,
      toolCallId: call.toolCallId,
      actor: "ann",
      approved: false,
      reason,
    });
  }
  expect(await durable.advance("agent")).toBe("completed");
  const agentLedger = (await durable.status("agent", { ledger: true }))!;
  const receipt = agentLedger.steps.find((step) => step.id === "support/turn-1/approval-1")!.result as any;
  expect(receipt.payload).toMatchObject({ actor: "ann", reason: `tool ${MARK.reason}` });

  const turn = await startChatTurn(durable, chat, { chatId: "chat-1", messages: [user("m1", MARK.chat)] });
  expect(await durable.advance(turn.runId)).toBe("completed");
  const history = await loadChat(durable, "chat-1");
  expect(history[0]).toEqual(user("m1", MARK.chat));
  const answer = history[1]!.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
  expect(answer).toContain(MARK.chat); // the mock model echoes the prompt
}

export function runEncryptionScanContract(label: string, connectDb: () => Promise<Kysely<any>>) {
  describe(`encryption at rest, the all-tables scan (${label})`, () => {
    let db: Kysely<any>;
    const instances: Durable[] = [];
    /** An instance: plain (false), under a fresh key k1 (true), or under the keys given. */
    const instance = (encrypt: boolean | EncryptionKey[]) => {
      const keys = encrypt === true ? [{ id: "k1", secret: randomBytes(32).toString("base64") }] : encrypt;
      const encryption = keys ? { keys } : undefined;
      const durable = createDurable({
        db,
        workflows: [everything, failing, parked, chat, streamer, ended, subscriber, eventWaiter, approval, refundAgent],
        baseUrl: "https://app.example.com",
        encryption,
        log: () => {},
      });
      instances.push(durable);
      return durable;
    };

    beforeAll(async () => {
      modelServer = await startMockModelServer();
      db = await connectDb();
      await instance(false).migrate();
    });
    afterAll(async () => {
      for (const durable of instances) await durable.close();
      await modelServer?.close();
    });

    it("scans every durable_% table's text, json, jsonb, text[] and bytea columns", async () => {
      const columns = (await textColumns(db)).map((c) => `${c.table}.${c.column}`);
      for (const column of [
        "durable_runs.input",
        "durable_runs.output",
        "durable_runs.error",
        "durable_steps.result",
        "durable_steps.error",
        "durable_signals.payload",
        "durable_callbacks.payload",
        "durable_stream_chunks.data",
        "durable_events.data",
        "durable_chats.chat_id",
        "durable_app_events.data",
        "durable_approval_decisions.reason",
      ]) {
        expect(columns).toContain(column);
      }
    });

    it("with encryption off, the scan finds every marker", async () => {
      await resetDurableTables(db);
      await exerciseEverything(instance(false));
      const found = new Set((await scanForPlaintext(db, markers)).map((hit) => hit.marker));
      expect([...found].sort()).toEqual([...markers].sort());
    });

    it("with encryption on, no row holds a marker, and every reader answers plain values", async () => {
      await resetDurableTables(db);
      await exerciseEverything(instance(true));
      expect(await scanForPlaintext(db, markers)).toEqual([]);
    });

    it("seals each stream chunk under the run's key; readStream answers them plain, equal values alike", async () => {
      await resetDurableTables(db);
      const durable = instance(true);
      const big = "x".repeat(60 * 1024); // near the 64 KiB limit, measured on the plaintext
      const chunks = [{ text: "@" }, "@", 7, null, ["@"], { text: "@" }, big];
      await durable.start(streamer, { chunks }, { id: "s-1" });
      expect(await durable.advance("s-1")).toBe("completed");
      expect((await durable.status("s-1"))!.output).toEqual({ refused: null });
      const written = fromTemplate(chunks);
      expect((await durable.readStream("s-1"))!.chunks.map((chunk) => chunk.data)).toEqual(written);
      const { rows } = await sql<{ data: unknown; size: number }>`
        select data, octet_length(data::text) as size
          from durable_stream_chunks where run_id = 's-1' order by seq`.execute(db);
      expect(rows.every((row) => typeof row.data === "string" && row.data.startsWith("$denc1.k1."))).toBe(true);
      // The synthetic nonce: equal chunks of one run are equal envelopes; the deflated big one is small.
      expect(rows[5]!.data).toBe(rows[0]!.data);
      expect(rows[6]!.size).toBeLessThan(1024);
      expect(await scanForPlaintext(db, [MARK.stream])).toEqual([]);
    });

    it("refuses a chunk over 64 KiB of plaintext; without a sealing key, one holding the prefix", async () => {
      await resetDurableTables(db);
      const sealing = instance(true);
      await sealing.start(streamer, { chunks: ["y".repeat(64 * 1024 + 1)] }, { id: "s-big" });
      expect(await sealing.advance("s-big")).toBe("completed");
      expect((await sealing.status("s-big"))!.output).toMatchObject({ refused: "ResultTooLargeError" });

      const plain = instance(false);
      await plain.start(streamer, { chunks: ["fine", { note: "%k1.abc" }] }, { id: "s-prefix" });
      expect(await plain.advance("s-prefix")).toBe("completed");
      expect((await plain.status("s-prefix"))!.output).toEqual({
        refused: new InvalidInputError("x").name,
        namesPrefix: true,
      });
      // Nothing of the refused write was stored; the chunk before it was.
      expect((await plain.readStream("s-prefix"))!.chunks.map((chunk) => chunk.data)).toEqual(["fine"]);
    });

    it("reencrypt moves a run's stream chunks to the new key, and readStream still answers them plain", async () => {
      await resetDurableTables(db);
      const k1 = { id: "k1", secret: randomBytes(32).toString("base64") };
      const k2 = { id: "k2", secret: randomBytes(32).toString("base64") };
      const before = instance([k1]);
      await before.start(streamer, { chunks: [{ text: "@" }, "@"] }, { id: "s-rot" });
      expect(await before.advance("s-rot")).toBe("completed");
      const rotated = instance([k2, { ...k1, decryptOnly: true }]);
      expect((await rotated.reencrypt()).runs).toBe(1);
      const { rows } = await sql<{ data: string }>`
        select data from durable_stream_chunks where run_id = 's-rot' order by seq`.execute(db);
      expect(rows.map((row) => row.data.slice(0, 10))).toEqual(["$denc1.k2.", "$denc1.k2."]);
      const after = instance([k2]);
      expect((await after.readStream("s-rot"))!.chunks.map((chunk) => chunk.data)).toEqual(
        fromTemplate([{ text: "@" }, "@"]),
      );
    });

    it("reencrypt moves an approval decision's reason to the new key; approvals() still opens it", async () => {
      await resetDurableTables(db);
      const k1 = { id: "k1", secret: randomBytes(32).toString("base64") };
      const k2 = { id: "k2", secret: randomBytes(32).toString("base64") };
      const before = instance([k1]);
      await before.start(approval, {}, { id: "a-rot" });
      expect(await before.advance("a-rot")).toBe("waiting");
      await before.decide({ runId: "a-rot", name: "ship", actor: "ann", approved: true, reason: MARK.reason });
      const rotated = instance([k2, { ...k1, decryptOnly: true }]);
      expect((await rotated.reencrypt()).runs).toBe(1);
      const { rows } = await sql<{ reason: string }>`
        select reason from durable_approval_decisions where run_id = 'a-rot'`.execute(db);
      expect(rows.map((row) => row.reason.slice(0, 10))).toEqual(["$denc1.k2."]);
      const [pending] = (await instance([k2]).approvals()).approvals;
      expect(pending!.decisions.map((d) => d.reason)).toEqual([MARK.reason]);
    });
  });
}
