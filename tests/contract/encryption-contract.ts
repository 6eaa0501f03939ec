// Encryption at rest (docs/guide/encryption.md) on every database: a workflow that stores every
// kind of core payload behaves as without encryption while the payload columns hold no plaintext;
// rotation, decrypt-only keys, a missing key refused with nothing changed, reencrypt in batches.
// The composition suite runs once more encrypted beside this (tests/pglite/encryption.test.ts).
import { createHash, randomBytes } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createDurable,
  DecryptionError,
  defineWorkflow,
  type Durable,
  type EncryptionKey,
  FatalStepError,
} from "@/lib/durable";
import { parseEnvelope } from "@/lib/durable/encryption/envelope";
import { resetDurableTables } from "../helpers/databases";
import { until } from "../helpers/until";

export const TEST_KEYS = {
  k1: { id: "k1", secret: Buffer.alloc(32, 1).toString("base64") },
  k2: { id: "k2", secret: Buffer.alloc(32, 2).toString("base64") },
} satisfies Record<string, EncryptionKey>;
const retired = (key: EncryptionKey): EncryptionKey => ({ ...key, decryptOnly: true });

/** What every payload of these runs carries: found nowhere in the payload columns while sealed. */
const MARK = "MARK-c0ffee";
const tokens = new Map<string, string>();

const kid = defineWorkflow({
  name: "enc-kid",
  input: z.object({ secret: z.string() }),
  async run(ctx, input) {
    return { echoed: await ctx.step.run("echo", () => `${input.secret}+kid`) };
  },
});

const vault = defineWorkflow({
  name: "enc-vault",
  input: z.object({ secret: z.string() }),
  signals: { note: z.object({ text: z.string() }), race: z.object({ text: z.string() }) },
  async run(ctx, input) {
    const step = await ctx.step.run("step", () => `${input.secret}:step`);
    const flaky = await ctx.step.run(
      "flaky",
      (s) => {
        if (s.attempt === 1) throw new Error(`${input.secret}:flaky-error`);
        return "recovered";
      },
      { retries: 2, retryDelay: "1h" },
    );
    let caught = "";
    try {
      await ctx.step.run("doomed", () => {
        throw new FatalStepError(`${input.secret}:fatal`);
      });
    } catch (error) {
      caught = (error as Error).message;
    }
    const note = await ctx.step.waitForSignal("note");
    const cb = await ctx.step.callback("approve", { schema: z.object({ text: z.string() }) });
    await ctx.step.run("publish", () => void tokens.set(ctx.runId, cb.token));
    const approved = await ctx.step.waitForCallback(cb);
    const child = await ctx.step.invoke("kid", kid, { secret: `${input.secret}:kid-input` });
    const race = await ctx.step.waitForAny("race", { race: { signal: "race" }, late: { sleep: "1d" } });
    return { step, flaky, caught, note, approved, child, race };
  },
});

const steady = defineWorkflow({
  name: "enc-steady",
  input: z.object({ secret: z.string(), steps: z.number().default(1) }),
  async run(ctx, input) {
    const results: string[] = [];
    for (let i = 0; i < input.steps; i++) results.push(await ctx.step.run(`s${i}`, () => `${input.secret}:${i}`));
    return results;
  },
});

const debounced = defineWorkflow({
  name: "enc-debounced",
  input: z.object({ doc: z.string(), text: z.string() }),
  debounce: { key: (input) => input.doc, period: "1m" },
  async run(_ctx, input) {
    return input.text;
  },
});

// A result near the 1 MiB limit, incompressible: over the claim's inline limit, read when replayed.
const big = defineWorkflow({
  name: "enc-big",
  input: z.object({}),
  signals: { go: z.null() },
  async run(ctx) {
    const blob = await ctx.step.run("blob", () => randomBytes(760 * 1024).toString("base64"));
    await ctx.step.waitForSignal("go");
    return { length: blob.length, digest: createHash("sha256").update(blob).digest("hex") };
  },
});

// A loop of two links (ctx.continueAsNew) with a patch (ctx.patched) in each: the successor's
// input is its own payload, sealed under its id; the patch marker is a receipt like any.
const looping = defineWorkflow({
  name: "enc-looping",
  input: z.object({ secret: z.string(), round: z.number() }),
  async run(ctx, input) {
    const patched = await ctx.patched("p1");
    const seen = await ctx.step.run("seen", () => `${input.secret}:${input.round}:${patched}`);
    if (input.round < 1) return ctx.continueAsNew({ secret: input.secret, round: input.round + 1 });
    return seen;
  },
});

const workflows = [kid, vault, steady, debounced, big, looping];

/** Every payload column's text, one string per table (tests/contract/encryption-contract.ts). */
export async function payloadText(db: Kysely<any>): Promise<string> {
  const { rows } = await sql<{ text: string | null }>`
    select concat_ws('|',
      (select string_agg(concat_ws(',', input::text, output::text, error::text), '|') from durable_runs),
      (select string_agg(concat_ws(',', result::text, error::text), '|') from durable_steps),
      (select string_agg(payload::text, '|') from durable_signals),
      (select string_agg(payload::text, '|') from durable_callbacks),
      (select string_agg(data::text, '|') from durable_events)) as text`.execute(db);
  return rows[0]?.text ?? "";
}

/** What a missing key must leave as it is: every payload, status and receipt (not the claim's bookkeeping). */
async function fingerprint(db: Kysely<any>): Promise<string> {
  const { rows } = await sql<{ h: string }>`
    select md5(concat_ws('|',
      (select string_agg(concat_ws(',', id, status, input::text, output::text, error::text), '|' order by id)
         from durable_runs),
      (select string_agg(concat_ws(',', run_id, step_id, status, attempt, result::text, error::text), '|'
                         order by run_id, step_id) from durable_steps),
      (select string_agg(concat_ws(',', seq, payload::text, taken_by), '|' order by seq) from durable_signals),
      (select string_agg(concat_ws(',', id, payload::text), '|' order by id) from durable_callbacks))) as h`.execute(
    db,
  );
  return rows[0]!.h;
}

export function runEncryptionContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`encryption at rest on ${label}`, () => {
    let db: Kysely<any>;
    const opened: Durable[] = [];
    const logs: string[] = [];
    const make = (keys: EncryptionKey[] | null) => {
      const durable = createDurable({
        db,
        workflows,
        secrets: { durable: "t" },
        defaults: { lease: "2s" },
        log: (message) => logs.push(message),
        ...(keys ? { encryption: { keys } } : {}),
      });
      opened.push(durable);
      return durable;
    };
    const drain = async (durable: Durable) => {
      for (let i = 0; i < 20 && (await durable.countDue()) > 0; i++) await durable.tick({ budgetMs: 10_000 });
    };

    beforeAll(async () => {
      db = await open();
      await make(null).migrate();
    });
    beforeEach(async () => {
      await resetDurableTables(db);
      logs.length = 0;
      tokens.clear();
    });
    afterEach(() => {
      opened.length = 0;
    });
    // Every instance shares the one handle: closing one would close it for the rest.
    afterAll(async () => db?.destroy());

    it("every core payload is sealed at rest while the body, status(), list() and events() see it plain", async () => {
      const durable = make([TEST_KEYS.k1]);
      await durable.start(vault, { secret: MARK }, { id: "v" });
      await drain(durable);
      // The first attempt's error waits in the step row for the retry, sealed; status() shows it.
      const flaky = (await durable.status("v"))!.steps.find((step) => step.id === "flaky")!;
      expect(flaky).toMatchObject({ status: "waiting", error: { message: `${MARK}:flaky-error` } });
      await durable.testing.advanceClock("1h");
      await drain(durable);
      await durable.signal({ runId: "v", name: "note", payload: { text: `${MARK}:note` } });
      await drain(durable);
      await durable.completeCallback(tokens.get("v")!, { text: `${MARK}:cb` });
      await drain(durable);
      await durable.signal({ runId: "v", name: "race", payload: { text: `${MARK}:race` } });
      await drain(durable);
      const status = (await durable.status("v"))!;
      expect(status.status).toBe("completed");
      expect(status.output).toEqual({
        step: `${MARK}:step`,
        flaky: "recovered",
        caught: `${MARK}:fatal`,
        note: { text: `${MARK}:note` },
        approved: { text: `${MARK}:cb` },
        child: { echoed: `${MARK}:kid-input+kid` },
        race: { branch: "race", value: { text: `${MARK}:race` } },
      });
      expect(status.steps.find((step) => step.id === "flaky")).toMatchObject({ status: "completed", attempt: 2 });
      expect(status.steps.find((step) => step.id === "doomed")?.error?.message).toBe(`${MARK}:fatal`);

      await durable.start(vault, { secret: MARK }, { id: "c" });
      await durable.cancel("c", `${MARK}:reason`);
      expect((await durable.status("c"))?.error).toEqual({ code: "cancelled", message: `${MARK}:reason` });
      const listed = await durable.list({ status: "cancelled" });
      expect(listed.runs[0]?.error?.message).toBe(`${MARK}:reason`);
      const cancelled = (await durable.events("c")).find((event) => event.kind === "cancel");
      expect(cancelled?.data.reason).toBe(`${MARK}:reason`);
      // A start repeated with the same input is the same run, sealed or not.
      expect((await durable.start(vault, { secret: MARK }, { id: "c" })).created).toBe(false);
      await durable.start(vault, { secret: MARK }, { id: "c2" });
      expect(await durable.cancelMany({ workflow: "enc-vault" }, { reason: `${MARK}:many` })).toEqual({
        matched: 1,
        changed: 1,
      });
      expect((await durable.status("c2"))?.error?.message).toBe(`${MARK}:many`);

      const stored = await payloadText(db);
      expect(stored).not.toContain(MARK);
      expect(stored).toContain("$denc1.k1.");
    });

    it("continueAsNew seals its successor's input under the successor's id; a patch marker is sealed too", async () => {
      const durable = make([TEST_KEYS.k1]);
      await durable.start(looping, { secret: MARK, round: 0 }, { id: "loop" });
      await drain(durable);
      expect(await durable.status("loop")).toMatchObject({ status: "completed", continuedAs: "loop~1" });
      expect(await durable.status("loop~1")).toMatchObject({
        status: "completed",
        continuedFrom: "loop",
        output: `${MARK}:1:true`,
      });
      const { rows } = await sql<{ input: string }>`
        select input #>> '{}' as input from durable_runs where id = 'loop~1'`.execute(db);
      expect(parseEnvelope(rows[0]!.input)?.scope).toBe("loop~1");
      expect((await durable.list({ beforePatch: "p1", workflow: "enc-looping" })).runs).toEqual([]);
      const stored = await payloadText(db);
      expect(stored).not.toContain(MARK);
      expect(stored).toContain("$denc1.k1.");
    });

    it("a debounced start's input is sealed under the id of the pending run it replaces", async () => {
      const durable = make([TEST_KEYS.k1]);
      await durable.start(debounced, { doc: "a", text: `${MARK}:first` }, { id: "d1" });
      const second = await durable.start(debounced, { doc: "a", text: `${MARK}:second` }, { id: "d2" });
      expect(second).toMatchObject({ id: "d1", created: false, debounced: true });
      const { rows } = await sql<{ input: string }>`select input #>> '{}' as input from durable_runs`.execute(db);
      expect(rows.length).toBe(1);
      expect(parseEnvelope(rows[0]!.input)?.scope).toBe("d1");
      await durable.testing.advanceClock("2m");
      await drain(durable);
      expect((await durable.status("d1"))?.output).toBe(`${MARK}:second`);
    });

    it("a result near 1 MiB is stored sealed, left out of the claim and read and opened on replay", async () => {
      const durable = make([TEST_KEYS.k1]);
      await durable.start(big, {}, { id: "big" });
      await drain(durable);
      const { rows } = await sql<{ bytes: number; stored: number }>`
        select result_bytes as bytes, octet_length(result::text) as stored
          from durable_steps where run_id = 'big' and step_id = 'blob'`.execute(db);
      // The limits measure the plaintext; the envelope is larger (base64 of what did not deflate).
      expect(rows[0]!.bytes).toBeGreaterThan(1_000_000);
      expect(rows[0]!.stored).toBeGreaterThan(rows[0]!.bytes);
      await durable.signal({ runId: "big", name: "go", payload: null });
      await drain(durable);
      const output = (await durable.status("big"))?.output as { length: number; digest: string };
      expect(output.length).toBe(rows[0]!.bytes - 2);
      expect(output.digest).toMatch(/^[0-9a-f]{64}$/);
    });

    it("rotation: a new first key writes under it, the retired one still reads; reencrypt moves the rest", async () => {
      await make([TEST_KEYS.k1]).start(steady, { secret: MARK, steps: 2 }, { id: "r" });
      const rotated = make([TEST_KEYS.k2, retired(TEST_KEYS.k1)]);
      await drain(rotated);
      expect((await rotated.status("r"))?.output).toEqual([`${MARK}:0`, `${MARK}:1`]);
      const { rows } = await sql<{ input: string; output: string }>`
        select input #>> '{}' as input, output #>> '{}' as output from durable_runs where id = 'r'`.execute(db);
      expect(rows[0]!.input.startsWith("$denc1.k1.")).toBe(true);
      expect(rows[0]!.output.startsWith("$denc1.k2.")).toBe(true);
      // A start repeated under the new key answers the run its old key sealed.
      expect((await rotated.start(steady, { secret: MARK, steps: 2 }, { id: "r" })).created).toBe(false);
      // A fork copies the sealed input and receipts as they are: they open under the source's scope.
      await rotated.fork("r", { fromStep: "s1", id: "r-fork" });
      await drain(rotated);
      expect((await rotated.status("r-fork"))?.output).toEqual([`${MARK}:0`, `${MARK}:1`]);

      const first = await rotated.reencrypt();
      expect(first.runs).toBe(2);
      expect(first.values).toBeGreaterThan(0);
      expect(await payloadText(db)).not.toContain("$denc1.k1.");
      expect(await rotated.reencrypt()).toEqual({ runs: 2, values: 0 });
      // k1 is gone: an instance with only k2 reads everything.
      expect((await make([TEST_KEYS.k2]).status("r"))?.output).toEqual([`${MARK}:0`, `${MARK}:1`]);
    });

    it("decrypt-only keys alone read what they sealed and write plain; a plain value may not look sealed", async () => {
      await make([TEST_KEYS.k1]).start(steady, { secret: MARK }, { id: "old" });
      const reader = make([retired(TEST_KEYS.k1)]);
      await reader.start(steady, { secret: "plain" }, { id: "new" });
      await drain(reader);
      expect((await reader.status("old"))?.output).toEqual([`${MARK}:0`]);
      const { rows } = await sql<{ output: unknown }>`select output from durable_runs where id = 'new'`.execute(db);
      expect(rows[0]!.output).toEqual(["plain:0"]);
      await expect(reader.start(steady, { secret: "$denc1.k1.x" }, { id: "fake" })).rejects.toThrow(/\$denc1\./);
      expect(await reader.status("fake")).toBeNull();
    });

    it("a missing key: the claim and status() throw DecryptionError naming it, nothing changes", async () => {
      await make([TEST_KEYS.k1]).start(steady, { secret: MARK }, { id: "m" });
      const before = await fingerprint(db);
      const lacking = make([TEST_KEYS.k2]);
      const report = await lacking.tick({ budgetMs: 10_000 });
      expect(report.warnings.join("\n")).toMatch(/^run "m" was not advanced: .*key "k1"/m);
      expect(report.completed + report.failed).toBe(0);
      await expect(lacking.status("m")).rejects.toSatisfy(
        (error: unknown) => DecryptionError.is(error) && error.keyId === "k1" && error.reason === "missing_key",
      );
      expect(logs.join("\n")).toContain('"k1"');
      expect(await fingerprint(db)).toBe(before);
      // Given back for a minute, not claimed again at once; nothing else of it was written.
      expect((await lacking.tick({ budgetMs: 10_000 })).claimed).toBe(0);
      // A page of runs still lists: a failed run's message no key opens names the key instead.
      await make([TEST_KEYS.k1]).start(vault, { secret: MARK }, { id: "f" });
      await make([TEST_KEYS.k1]).cancel("f", `${MARK}:gone`);
      const page = await lacking.list({});
      expect(page.runs.map((run) => run.id).sort()).toEqual(["f", "m"]);
      expect(page.runs.find((run) => run.id === "f")?.error).toMatchObject({ code: "cancelled" });
      expect(page.runs.find((run) => run.id === "f")?.error?.message).toMatch(/key "k1", which is not configured/);
      const events = await make([retired(TEST_KEYS.k1)]).events("m");
      expect(events.map((event) => event.kind)).toContain("decryption.failed");

      const restored = make([TEST_KEYS.k2, retired(TEST_KEYS.k1)]);
      await restored.testing.advanceClock("61s");
      await drain(restored);
      const status = await restored.status("m");
      expect(status).toMatchObject({ status: "completed", output: [`${MARK}:0`], attempts: 2 });
      expect(status?.steps[0]?.attempt).toBe(1);
    });

    it("a worker without the key logs the refusal, gives the run back once and goes on with the others", async () => {
      await make([TEST_KEYS.k1]).start(steady, { secret: MARK }, { id: "w" });
      const worker = make([TEST_KEYS.k2]);
      await worker.start(steady, { secret: "open" }, { id: "ok" });
      const stop = new AbortController();
      const working = worker.work({ signal: stop.signal, pollMs: 20 });
      try {
        await until(async () => (await worker.status("ok"))?.status === "completed");
        await until(() => logs.some((line) => line.includes("[w] not advanced") && line.includes('"k1"')));
      } finally {
        stop.abort();
        await working;
      }
      const events = await make([retired(TEST_KEYS.k1)]).events("w");
      expect(events.filter((event) => event.kind === "decryption.failed")).toHaveLength(1);
      expect((await make([retired(TEST_KEYS.k1)]).status("w"))?.status).toBe("pending");
    });

    it("reencrypt walks in batches; a key it lacks stops the batch with nothing of it written", async () => {
      const sealer = make([TEST_KEYS.k1]);
      for (let n = 0; n < 5; n++) await sealer.start(steady, { secret: `${MARK}-${n}` }, { id: `b${n}` });
      await drain(sealer);
      const before = await fingerprint(db);
      await expect(make([TEST_KEYS.k2]).reencrypt({}, { batchSize: 10 })).rejects.toSatisfy(
        (error: unknown) => DecryptionError.is(error) && error.keyId === "k1",
      );
      expect(await fingerprint(db)).toBe(before);
      const rotated = make([TEST_KEYS.k2, retired(TEST_KEYS.k1)]);
      await expect(rotated.reencrypt({ workflow: "enc-steady" }, { batchSize: 0 })).rejects.toThrow(/batchSize/);
      const moved = await rotated.reencrypt({ workflow: "enc-steady" }, { batchSize: 2 });
      // Each run: input, output and one step result.
      expect(moved).toEqual({ runs: 5, values: 15 });
      expect(await payloadText(db)).not.toContain("$denc1.k1.");
      for (let n = 0; n < 5; n++) expect((await rotated.status(`b${n}`))?.output).toEqual([`${MARK}-${n}:0`]);
    });
  });
}
