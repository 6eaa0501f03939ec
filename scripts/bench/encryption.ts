// The cost of encryption at rest (docs/guide/encryption.md) per step: the same drain of runs whose
// steps return one payload, with encryption off and on, in turns, in this one process; and the
// codec alone (seal, open, a run's key derivation), with no database. Payloads of 1 KiB and 64 KiB,
// JSON-ish (records of names, amounts and dates: deflate shrinks them) and random-ish (base64 of
// random bytes: deflate cannot).
import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow } from "../../lib/durable";
import { createPayloadCodec } from "../../lib/durable/encryption/payload-codec";
import { freshServerDatabase } from "./databases";
import { percentile } from "./report";

const STEPS = 3;
const ROUNDS = 3;
const KEY = { id: "bench", secret: randomBytes(32).toString("base64") };

interface Payload {
  label: string;
  value: unknown;
  /** Runs drained per measurement: fewer for the large payloads. */
  runs: number;
}

const NAMES = ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson", "Edsger Dijkstra"];

/** Records until the JSON text reaches `bytes`: the shape of an order list, a plan, an API answer. */
function jsonish(bytes: number): unknown {
  const items: unknown[] = [];
  for (let i = 0; JSON.stringify(items).length < bytes - 80; i++) {
    items.push({
      id: `ord_${(1_000_000 + i * 7919).toString(36)}`,
      customer: NAMES[i % NAMES.length],
      amountCents: 500 + ((i * 37) % 9000),
      currency: "EUR",
      at: new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString(),
    });
  }
  return { items };
}

/** A base64 string of random bytes, `bytes` long as JSON: what deflate cannot shrink (an image, a token). */
const randomish = (bytes: number) => randomBytes(Math.floor(((bytes - 2) * 3) / 4)).toString("base64");

const PAYLOADS: Payload[] = [
  { label: "1 KiB JSON-ish", value: jsonish(1024), runs: 200 },
  { label: "1 KiB random", value: randomish(1024), runs: 200 },
  { label: "64 KiB JSON-ish", value: jsonish(64 * 1024), runs: 40 },
  { label: "64 KiB random", value: randomish(64 * 1024), runs: 40 },
];

/** Each step returns the payload: a step result written, and read back by the next claim's ledger. */
const payloadSteps = defineWorkflow({
  name: "bench-encryption",
  input: z.object({ payload: z.number() }),
  async run(ctx, input) {
    const payload = PAYLOADS[input.payload]!.value;
    for (let i = 0; i < STEPS; i++) await ctx.step.run(`step-${i}`, () => payload);
    return null;
  },
});

export interface EncryptionRow {
  label: string;
  plainBytes: number;
  /** Node CPU µs per step, median of the rounds. */
  cpuOff: number;
  cpuOn: number;
  /** Bytes stored per step's result (pg_column_size: after TOAST's own compression). */
  storedOff: number;
  storedOn: number;
  /** The codec alone, µs per value: seal (the run's keys cached), open. */
  seal: number;
  open: number;
  envelopeBytes: number;
}

/** Drains `runs` runs of the payload on `url` with one tick loop; node CPU µs per step and bytes per result. */
async function drain(url: string, payload: number, runs: number, encrypt: boolean) {
  const durable: Durable = createDurable({
    db: await connect(url, { driver: "pg", poolSize: 2 }),
    workflows: [payloadSteps],
    secrets: { durable: "bench" },
    encryption: encrypt ? { keys: [KEY] } : undefined,
    log: () => {},
  });
  await sql`truncate durable_runs, durable_steps, durable_events cascade`.execute(durable.db);
  for (let i = 0; i < runs; i++) await durable.start(payloadSteps, { payload }, { id: `r-${i}` });
  const cpu0 = process.cpuUsage();
  for (;;) if ((await durable.tick({ budgetMs: 40_000 })).claimed === 0) break;
  const used = process.cpuUsage(cpu0);
  const { rows } = await sql<{ done: number; bytes: number }>`
    select (select count(*)::int from durable_runs where status = 'completed') as done,
           (select avg(pg_column_size(result))::float8 from durable_steps) as bytes`.execute(durable.db);
  await durable.close();
  if (rows[0]!.done !== runs) throw new Error(`drain incomplete: ${rows[0]!.done} of ${runs} runs completed`);
  return { cpu: (used.user + used.system) / (runs * STEPS), bytes: rows[0]!.bytes };
}

/** µs per seal and per open of `value` by the codec, with a run's keys derived once. */
async function codecAlone(value: unknown, times: number) {
  const codec = createPayloadCodec({ keys: [KEY] });
  const json = JSON.stringify(value);
  const sealed = JSON.parse(await codec.sealJson("run-1", json)) as string;
  let t = process.cpuUsage();
  for (let i = 0; i < times; i++) await codec.sealJson("run-1", json);
  const seal = cpuUs(t) / times;
  t = process.cpuUsage();
  for (let i = 0; i < times; i++) await codec.open(sealed);
  const open = cpuUs(t) / times;
  return { seal, open, envelopeBytes: Buffer.byteLength(JSON.stringify(sealed)), plainBytes: Buffer.byteLength(json) };
}

const cpuUs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

/** µs to derive a run's keys (HKDF, two key imports): paid once per run per process. */
async function keyDerivation(times: number): Promise<number> {
  const codec = createPayloadCodec({ keys: [KEY] });
  const t = process.cpuUsage();
  for (let i = 0; i < times; i++) await codec.sealJson(`derive-${i}`, "1");
  return cpuUs(t) / times;
}

/** The section's figures: each payload drained off and on, ROUNDS times in turns, and the codec alone. */
export async function encryptionCost(): Promise<{ rows: EncryptionRow[]; derive: number; steps: number }> {
  const url = await freshServerDatabase("encryption");
  const admin = createDurable({ db: await connect(url, { driver: "pg" }), workflows: [], log: () => {} });
  await admin.migrate();
  await admin.close();
  await drain(url, 0, 50, true); // untimed: JIT-compiles the engine and the codec
  const rows: EncryptionRow[] = [];
  for (const [index, payload] of PAYLOADS.entries()) {
    const off: number[] = [];
    const on: number[] = [];
    let storedOff = 0;
    let storedOn = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const encrypt of round % 2 === 0 ? [false, true] : [true, false]) {
        const d = await drain(url, index, payload.runs, encrypt);
        (encrypt ? on : off).push(d.cpu);
        if (encrypt) storedOn = d.bytes;
        else storedOff = d.bytes;
      }
    }
    const alone = await codecAlone(payload.value, payload.runs * 5);
    rows.push({
      label: payload.label,
      plainBytes: alone.plainBytes,
      cpuOff: percentile(off, 50),
      cpuOn: percentile(on, 50),
      storedOff,
      storedOn,
      seal: alone.seal,
      open: alone.open,
      envelopeBytes: alone.envelopeBytes,
    });
  }
  return { rows, derive: await keyDerivation(2000), steps: STEPS };
}

/** The section's table and notes, under `heading` (bench.ts's, with the load average). */
export async function encryptionSection(heading: (text: string) => void, table: (rows: string[][]) => void) {
  const t = await encryptionCost();
  heading(
    `12. Encryption at rest per step: runs of ${t.steps} run steps each returning the payload, drained by one tick ` +
      `loop on PostgreSQL (pg)\n    with encryption off and on (median of ${ROUNDS} drains each, in turns); ` +
      "and the codec alone, no database",
  );
  const us = (v: number) => `${v.toFixed(0)} µs`;
  const bytes = (v: number) => `${Math.round(v).toLocaleString("en-US")} B`;
  const signed = (v: number) => `${v >= 0 ? "+" : ""}${v.toFixed(0)} µs`;
  table([
    ["payload", "JSON", "CPU off", "CPU on", "cost", "stored off", "stored on", "envelope", "seal", "open"],
    ...t.rows.map((r) => [
      r.label,
      bytes(r.plainBytes),
      us(r.cpuOff),
      us(r.cpuOn),
      signed(r.cpuOn - r.cpuOff),
      bytes(r.storedOff),
      bytes(r.storedOn),
      bytes(r.envelopeBytes),
      us(r.seal),
      us(r.open),
    ]),
  ]);
  console.log(
    `
  CPU: this process's CPU per step (node only; the server's is not counted), a step's result sealed when written and
  opened when a later claim reads the ledger. stored: pg_column_size of a step's result (after TOAST's own pglz
  compression, which a plain JSON-ish value gets and an envelope does not: the codec deflates before it seals).
  envelope: the sealed value's JSON text. seal, open: the codec alone, one value, the run's keys cached; deriving a
  run's keys (HKDF and two key imports, once per run per process) takes ${us(t.derive)}.`,
  );
}
