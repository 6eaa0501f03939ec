// Encryption at rest at the engine's chokepoints (docs/guide/encryption.md): every payload a
// command or an owner writes is sealed here, with its run's id as the scope, and every record
// the store reads back is opened here before a body, a caller or a page sees it. store/ stays
// SQL only, and encryption/ knows nothing of runs: this file is where the two meet.
import { ENVELOPE_PREFIX } from "../encryption/envelope";
import { createPayloadCodec, type PayloadCodec } from "../encryption/payload-codec";
import { InvalidInputError } from "../errors";
import type { ClaimedRun, RunEvent, RunRecord, StepOutcome, StepRecord, Wait } from "../store";

/** The fields of a stored error that hold free text: sealed; `code` and `name` stay plain. */
const ERROR_TEXT_FIELDS = ["message", "stack"] as const;

/**
 * Refuses JSON text that holds the envelope prefix when values are stored plain: read back, it
 * would be taken for an envelope. What a step body returns is checked where its JSON is made, so
 * the step fails as with any other value it cannot store (steps/effect-body.ts).
 */
export function checkPlainStorable(codec: PayloadCodec, json: string, what: string): void {
  if (!codec.seals && json.includes(ENVELOPE_PREFIX)) {
    throw new InvalidInputError(
      `${what} contains the text "${ENVELOPE_PREFIX}", which marks an encrypted payload: ` +
        "without an encryption key it cannot be stored",
    );
  }
}

/**
 * A stored error as it is written: its message (and stack) sealed under `runId`, and so the
 * message of an error it carries (`childError`); everything else as it is.
 */
export async function sealError<E>(codec: PayloadCodec, runId: string, error: E): Promise<E> {
  if (error === null || typeof error !== "object" || Array.isArray(error)) return error;
  const sealed: Record<string, unknown> = { ...(error as Record<string, unknown>) };
  for (const field of ERROR_TEXT_FIELDS) {
    const text = sealed[field];
    if (typeof text === "string") sealed[field] = await codec.sealText(runId, text);
  }
  if (sealed.childError && typeof sealed.childError === "object") {
    sealed.childError = await sealError(codec, runId, sealed.childError);
  }
  return sealed as E;
}

/**
 * A step outcome as it is written: its result, its error's text and the input of a child it
 * starts sealed (the child's input under the child's id: the row is the child's). `resultBytes`
 * keeps the plaintext's size, which the limits are measured on.
 */
export async function sealOutcome(codec: PayloadCodec, runId: string, outcome: StepOutcome): Promise<StepOutcome> {
  const sealed: StepOutcome = { ...outcome };
  if (outcome.resultJson !== undefined) {
    sealed.resultBytes = outcome.resultBytes ?? Buffer.byteLength(outcome.resultJson, "utf8");
    sealed.resultJson = await codec.sealJson(runId, outcome.resultJson);
  }
  if (outcome.error) sealed.error = await sealError(codec, runId, outcome.error);
  if (outcome.start)
    sealed.start = { ...outcome.start, inputJson: await codec.sealJson(outcome.start.id, outcome.start.inputJson) };
  return sealed;
}

/** A suspension's waits as they are written: a poll's last error, an invoked child's input (under its id). */
export async function sealWaits(codec: PayloadCodec, runId: string, waits: Wait[]): Promise<Wait[]> {
  return Promise.all(
    waits.map(async (wait) => {
      if (wait.error === undefined && wait.start === undefined) return wait;
      const sealed: Wait = { ...wait };
      if (wait.error !== undefined) sealed.error = await sealError(codec, runId, wait.error);
      if (wait.start) {
        const inputJson = await codec.sealJson(wait.start.id, JSON.stringify(wait.start.input));
        sealed.start = { ...wait.start, input: JSON.parse(inputJson) };
      }
      return sealed;
    }),
  );
}

/** A run record with its input, output and error opened. */
export async function openRun(codec: PayloadCodec, run: RunRecord): Promise<RunRecord> {
  const [input, output, error] = await Promise.all([
    codec.open(run.input),
    codec.open(run.output),
    codec.open(run.error),
  ]);
  return input === run.input && output === run.output && error === run.error ? run : { ...run, input, output, error };
}

/** A step record with its result and error opened. */
export async function openStep(codec: PayloadCodec, step: StepRecord): Promise<StepRecord> {
  const [result, error] = await Promise.all([codec.open(step.result), codec.open(step.error)]);
  return result === step.result && error === step.error ? step : { ...step, result, error };
}

/** A run and its steps opened, as status() and inspect() read them. */
export async function openRunAndSteps<R extends { run: RunRecord; steps: StepRecord[] }>(
  codec: PayloadCodec,
  read: R,
): Promise<R> {
  const [run, steps] = await Promise.all([
    openRun(codec, read.run),
    Promise.all(read.steps.map((step) => openStep(codec, step))),
  ]);
  return { ...read, run, steps };
}

/**
 * A claim opened: the run's input, the ledger's results and errors, the mailbox's payloads.
 * @throws DecryptionError naming the key when a value no key opens is in it
 */
export async function openClaim(codec: PayloadCodec, claim: ClaimedRun): Promise<ClaimedRun> {
  const [opened, mailbox] = await Promise.all([
    openRunAndSteps(codec, claim),
    Promise.all(
      claim.mailbox.map(async (entry) => {
        const payload = await codec.open(entry.payload);
        return payload === entry.payload ? entry : { ...entry, payload };
      }),
    ),
  ]);
  return { ...opened, mailbox };
}

/** Events with their data opened (a cancel's reason). */
export function openEvents(codec: PayloadCodec, events: RunEvent[]): Promise<RunEvent[]> {
  return Promise.all(
    events.map(async (event) => {
      const data = await codec.open(event.data);
      return data === event.data ? event : { ...event, data };
    }),
  );
}

const codecs = new WeakMap<object, PayloadCodec>();
const plainCodec = createPayloadCodec();

/** Notes the codec of a Durable facade (engine/create-durable.ts), for the wings that read the store. */
export function notePayloadCodec(durable: object, codec: PayloadCodec): void {
  codecs.set(durable, codec);
}

/**
 * The codec of a Durable facade: what a wing that reads payloads from the store itself (ai/)
 * opens them with. Anything else gets the plain codec, which still opens nothing it cannot:
 * a sealed value is a DecryptionError naming its key.
 */
export function payloadCodecOf(durable: object): PayloadCodec {
  return codecs.get(durable) ?? plainCodec;
}
