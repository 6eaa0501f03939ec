// engine/payloads.ts: what the engine seals of an outcome, an error and a suspension's waits, and
// what it opens of a claim. The database behaviour is tests/contract/encryption-contract.ts's.
import { describe, expect, it } from "vitest";
import { createPayloadCodec, holdsEnvelope } from "../../lib/durable/encryption/payload-codec";
import { openClaim, sealError, sealOutcome, sealWaits } from "../../lib/durable/engine/payloads";
import { InvalidInputError } from "../../lib/durable/errors";
import type { ClaimedRun } from "../../lib/durable/store";

const k1 = { id: "k1", secret: Buffer.alloc(32, 1).toString("base64") };
const sealing = createPayloadCodec({ keys: [k1] });
const plain = createPayloadCodec();

describe("engine/payloads", () => {
  it("seals an outcome's result, error text and child input, and keeps the plaintext's size", async () => {
    const resultJson = JSON.stringify({ text: "héllo secret" });
    const sealed = await sealOutcome(sealing, "run-1", {
      stepId: "s",
      seq: 0,
      kind: "start",
      status: "completed",
      attempt: 1,
      resultJson,
      error: { code: "error", name: "TypeError", message: "secret message" },
      start: { id: "child-1", workflow: "w", inputJson: JSON.stringify({ secret: 1 }) },
    });
    expect(sealed.resultBytes).toBe(Buffer.byteLength(resultJson, "utf8"));
    expect(sealed.resultJson).not.toContain("secret");
    expect(sealed.error).toMatchObject({ code: "error", name: "TypeError" });
    expect(sealed.error?.message).not.toContain("secret");
    expect(sealed.start?.inputJson).toContain("$denc1.k1.");
    expect(await sealing.open(JSON.parse(sealed.start!.inputJson))).toEqual({ secret: 1 });
  });

  it("seals a child's error inside an error, and a suspension's poll error and invoked input", async () => {
    const error = await sealError(sealing, "p", {
      code: "child_run_failed",
      message: "child failed: secret",
      childError: { code: "error", message: "secret inside" },
    });
    expect(JSON.stringify(error)).not.toContain("secret");
    expect(await sealing.open(error)).toEqual({
      code: "child_run_failed",
      message: "child failed: secret",
      childError: { code: "error", message: "secret inside" },
    });
    const waits = await sealWaits(sealing, "p", [
      { step_id: "poll", kind: "poll", error: { code: "error", message: "secret poll" } },
      { step_id: "sleep", kind: "sleep", wake_in_ms: 5 },
      {
        step_id: "kid",
        kind: "invoke",
        start: {
          id: "p/kid",
          workflow: "w",
          input: { secret: true },
          version: null,
          concurrency_key: null,
          singleton_key: null,
          deadline_in_ms: null,
        },
      },
    ]);
    expect(JSON.stringify(waits)).not.toContain("secret");
    expect(waits[1]).toEqual({ step_id: "sleep", kind: "sleep", wake_in_ms: 5 });
    expect(await sealing.open(waits[2]!.start!.input)).toEqual({ secret: true });
  });

  it("without a sealing key writes plain, defusing the prefix in text and refusing it in a value", async () => {
    const outcome = { stepId: "s", seq: 0, kind: "run", status: "completed", attempt: 1 } as const;
    const error = await sealError(plain, "r", { code: "error", message: "looks like $denc1.k1.x" });
    expect(holdsEnvelope(error)).toBe(false);
    await expect(sealOutcome(plain, "r", { ...outcome, resultJson: '"$denc1.k1.x"' })).rejects.toThrow(
      InvalidInputError,
    );
    const same = { ...outcome, resultJson: '"ok"' };
    expect(await sealOutcome(plain, "r", same)).toMatchObject({ resultJson: '"ok"', resultBytes: 4 });
  });

  it("opens a claim's input, ledger and mailbox, and returns a plain one's records as they are", async () => {
    const run = { id: "r", input: JSON.parse(await sealing.sealJson("r", '{"a":1}')), output: null, error: null };
    const step = { stepId: "s", result: JSON.parse(await sealing.sealJson("r", "[1]")), error: null };
    const entry = { seq: 1, name: "go", payload: JSON.parse(await sealing.sealJson("r", '"yes"')), omitted: false };
    const claim = { run, steps: [step], mailbox: [entry], healed: false, now: new Date() } as unknown as ClaimedRun;
    const opened = await openClaim(sealing, claim);
    expect(opened.run.input).toEqual({ a: 1 });
    expect(opened.steps[0]!.result).toEqual([1]);
    expect(opened.mailbox[0]!.payload).toBe("yes");
    const plainClaim = { ...claim, run: { ...run, input: { a: 1 } }, steps: [], mailbox: [] } as unknown as ClaimedRun;
    expect((await openClaim(plain, plainClaim)).run).toBe(plainClaim.run);
  });
});
