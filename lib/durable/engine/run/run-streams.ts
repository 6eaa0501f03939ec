import { ENVELOPE_PREFIX } from "../../encryption/envelope";
import type { PayloadCodec } from "../../encryption/payload-codec";
import { InvalidInputError, StepLeaseLostError } from "../../errors";
import { toJsonText } from "../../json";
import { appendStream, type DurableDb } from "../../store";
import type { StreamWriter } from "../../types";

/** How long a written chunk may wait in the buffer for others to share its round trip. */
export const STREAM_FLUSH_MS = 20;
/** The most chunks one round trip carries. */
const MAX_BATCH = 256;
const MAX_CHUNK_BYTES = 64 * 1024;

interface Buffer {
  attempt: number;
  pending: string[];
  timer: ReturnType<typeof setTimeout> | null;
  /** The append in flight: appends of one step go one after another, so its chunks keep their order. */
  sending: Promise<void>;
  /** Why the stream of this attempt can take no more chunks. */
  failure: Error | null;
}

/**
 * The stream writers of one execution: the attempt of each `run` or AI step in flight, and a buffer
 * for those that write. A step that never calls `ctx.stream` costs a map entry, nothing more. An
 * append the fence refuses stops the execution as lost (`onLost`), and every later write of it throws.
 */
export class RunStreams {
  private readonly attempts = new Map<string, number>();
  private readonly buffers = new Map<string, Buffer>();

  constructor(
    private readonly target: {
      db: DurableDb;
      runId: string;
      fence: number;
      /** Seals each chunk with the run's key (its size was checked on the plaintext, at the write). */
      codec: PayloadCodec;
      onLost: (reason: string) => void;
      log: (message: string) => void;
    },
  ) {}

  /** An attempt of `stepId` starts: its writes carry `attempt`. */
  begin(stepId: string, attempt: number): void {
    this.attempts.set(stepId, attempt);
  }

  /**
   * Sends what the attempt buffered and forgets it; rejects when the last chunks could not be
   * stored. Undefined when the attempt wrote nothing: most never do, and they cost no promise.
   */
  end(stepId: string): Promise<void> | undefined {
    this.attempts.delete(stepId);
    const buffer = this.buffers.get(stepId);
    if (!buffer) return undefined;
    return this.send(buffer, stepId).finally(() => {
      if (this.buffers.get(stepId) === buffer) this.buffers.delete(stepId);
    });
  }

  writer(stepId: string): StreamWriter {
    const attempt = this.attempts.get(stepId);
    if (attempt === undefined) {
      throw new InvalidInputError(
        `ctx.stream("${stepId}"): no run or AI step "${stepId}" is executing now; call it inside that step's body`,
      );
    }
    let buffer = this.buffers.get(stepId);
    if (!buffer) {
      buffer = { attempt, pending: [], timer: null, sending: Promise.resolve(), failure: null };
      this.buffers.set(stepId, buffer);
    }
    const own = buffer;
    return {
      write: (data) => {
        if (own.failure) throw own.failure;
        if (this.buffers.get(stepId) !== own) {
          throw new InvalidInputError(`ctx.stream("${stepId}"): the step's attempt is over; write inside its body`);
        }
        own.pending.push(this.chunkJson(stepId, data));
        if (own.pending.length >= MAX_BATCH) void this.send(own, stepId).catch(() => {});
        else own.timer ??= setTimeout(() => void this.send(own, stepId).catch(() => {}), STREAM_FLUSH_MS);
      },
      flush: () => this.send(own, stepId),
    };
  }

  /**
   * A chunk's JSON text, its size limit measured on the plaintext. Without a sealing key a chunk
   * holding the envelope prefix is refused here, at the write, as the codec refuses any such value
   * (encryption/payload-codec.ts): stored plain, a reader would take it for a sealed one.
   */
  private chunkJson(stepId: string, data: unknown): string {
    const json = toJsonText(data, { limit: MAX_CHUNK_BYTES, stepId });
    if (!this.target.codec.seals && json.includes(ENVELOPE_PREFIX)) {
      throw new InvalidInputError(
        `ctx.stream("${stepId}"): a chunk contains the text "${ENVELOPE_PREFIX}", which marks an encrypted ` +
          "payload: without an encryption key it cannot be stored",
      );
    }
    return json;
  }

  /** Sends the buffered chunks after the append in flight; rejects with the stream's failure. */
  private send(buffer: Buffer, stepId: string): Promise<void> {
    if (buffer.timer) clearTimeout(buffer.timer);
    buffer.timer = null;
    const batch = buffer.pending.splice(0);
    buffer.sending = buffer.sending.then(async () => {
      if (buffer.failure) throw buffer.failure;
      if (batch.length === 0) return;
      try {
        const { db, runId, fence, codec } = this.target;
        const dataJson = codec.seals ? await Promise.all(batch.map((json) => codec.sealJson(runId, json))) : batch;
        const last = await appendStream(db, runId, fence, { stepId, attempt: buffer.attempt, dataJson });
        if (last === null) {
          buffer.failure = new StepLeaseLostError(`step "${stepId}": the run's stream refused a write (lease lost)`);
          this.target.onLost("the fence refused a stream append");
        }
      } catch (error) {
        buffer.failure = error as Error;
        this.target.log(`[${this.target.runId}] stream append of step "${stepId}" failed: ${String(error)}`);
      }
      if (buffer.failure) throw buffer.failure;
    });
    return buffer.sending;
  }
}
