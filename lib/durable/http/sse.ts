import type { Durable } from "../engine/create-durable";
import { terminalStatuses } from "../schemas";

// A run's stream as Server-Sent Events (docs/model.md, "Run streams"; docs/decisions.md, "Run
// streams over SSE, read by fetch"): the handler answers after its first read, then this stream
// polls the table for the chunks after the last seq it sent.

export const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-store",
  // nginx and the proxies that follow it buffer responses unless told not to.
  "x-accel-buffering": "no",
};

export type StreamRead = NonNullable<Awaited<ReturnType<Durable["readStream"]>>>;
type Chunk = StreamRead["chunks"][number];

const TERMINAL: ReadonlySet<string> = new Set(terminalStatuses);
const encoder = new TextEncoder();

/** One `chunk` event; its id is the seq, which is what a reconnecting reader sends as `Last-Event-ID`. */
export function chunkEvent(chunk: Chunk): string {
  const { seq, stepId, attempt, data, broken } = chunk;
  // JSON.stringify escapes CR and LF, so the data is one line.
  return `id: ${seq}\nevent: chunk\ndata: ${JSON.stringify({ seq, stepId, attempt, data, broken })}\n\n`;
}

/** The last event of a stream: the run is terminal and every chunk was sent. */
export function endEvent(status: string): string {
  return `event: end\ndata: ${JSON.stringify({ status })}\n\n`;
}

export interface RunEventStreamOptions {
  /** Reads the chunks after `after` (at most `batch`) and the run's status; null when the run is gone. */
  read: (after: number) => Promise<StreamRead | null>;
  /** The seq the reader already has (0: none). */
  after: number;
  /** The read the handler made before answering (so an unknown run is a 404, not an empty stream). */
  first: StreamRead;
  /** The most chunks a read answers: a full read is followed by the next one at once. */
  batch: number;
  /** Between two reads that found nothing. */
  pollMs: number;
  /** A comment line goes out when nothing else did for this long, so proxies keep the response open. */
  pingMs: number;
  /** `Date.now()` after which the response ends without an `end` event: the reader resumes from its last id. */
  stopAt: number;
  /** The request's signal: a client that went away stops the polling. */
  signal?: AbortSignal;
  log: (message: string) => void;
  /**
   * Another event format over the same polling (the chat's UI message stream, ai/http/chat-stream.ts):
   * the text that opens the response, each chunk's event ("" skips it), and, given a complete
   * read, the text that ends the response, or null to go on polling. Default: this file's
   * `chunk` and `end` events, ending when the run is terminal.
   */
  format?: EventFormat;
}

export interface EventFormat {
  open: string;
  chunk: (chunk: Chunk) => string;
  end: (read: StreamRead) => string | null | Promise<string | null>;
}

const RUN_EVENTS: EventFormat = {
  open: ": open\n\n",
  chunk: chunkEvent,
  end: (read) => (TERMINAL.has(read.status) ? endEvent(read.status) : null),
};

/**
 * The body of `GET /api/durable/runs/{id}/stream`. Pull-driven: it reads the table only when the
 * response has room for more, so a slow reader slows the polling instead of filling memory.
 */
export function runEventStream(options: RunEventStreamOptions): ReadableStream<Uint8Array> {
  const pump = new RunEventPump(options);
  const format = options.format ?? RUN_EVENTS;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      // Something at once, so the headers go out even when no chunk comes for a while.
      controller.enqueue(encoder.encode(format.open));
    },
    pull: (controller) => pump.pull(controller),
    cancel: () => pump.cancel(),
  });
}

/** The polling behind one event stream: where it is, when it last sent, and whether it stopped. */
class RunEventPump {
  private last: number;
  private readonly format: EventFormat;
  private pending: StreamRead | null;
  private lastSentAt = Date.now();
  private stopped = false;
  private wake: (() => void) | null = null;
  private readonly stop = () => {
    this.stopped = true;
    this.wake?.();
  };

  constructor(private readonly options: RunEventStreamOptions) {
    this.last = options.after;
    this.format = options.format ?? RUN_EVENTS;
    this.pending = options.first;
    const { signal } = options;
    if (signal?.aborted) this.stopped = true;
    else signal?.addEventListener("abort", this.stop, { once: true });
  }

  /** Sends what the next read finds, a ping, or the end; sleeps between reads that find nothing. */
  async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    const { read, batch, pollMs, pingMs, stopAt, log } = this.options;
    for (;;) {
      // The budget is checked before each read (the handler's first read is always sent): past
      // it the response ends without `end`, and the reader comes back with its Last-Event-ID.
      if (this.stopped || (this.pending === null && Date.now() >= stopAt)) return this.finish(controller);
      let answer: StreamRead | null;
      let end: string | null = null;
      try {
        answer = this.pending ?? (await read(this.last));
        // Status and chunks come from one statement, so a terminal status with a short read means
        // every chunk is out: only the owner appends, and a terminal run has none.
        if (answer && answer.chunks.length < batch) end = await this.format.end(answer);
      } catch (e) {
        log(`reading the stream of a run failed: ${(e as Error)?.stack ?? e}`);
        return this.finish(controller); // the reader reconnects and resumes
      }
      this.pending = null;
      if (this.stopped) return this.finish(controller);
      if (answer === null) return this.finish(controller); // the run is gone: a reconnect answers 404

      let text = "";
      for (const chunk of answer.chunks) {
        text += this.format.chunk(chunk);
        this.last = chunk.seq;
      }
      if (end !== null) return this.finish(controller, text + end);
      if (text) {
        controller.enqueue(encoder.encode(text));
        this.lastSentAt = Date.now();
        return; // the next pull reads again; at once after a full read
      }
      const now = Date.now();
      if (now - this.lastSentAt >= pingMs) {
        controller.enqueue(encoder.encode(": ping\n\n"));
        this.lastSentAt = now;
        return;
      }
      await this.sleep(Math.max(1, Math.min(pollMs, stopAt - now, pingMs - (now - this.lastSentAt))));
    }
  }

  /** The reader went away. */
  cancel(): void {
    this.options.signal?.removeEventListener("abort", this.stop);
    this.stop();
  }

  /** Waits `ms`, or less when the request is aborted meanwhile. */
  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  private finish(controller: ReadableStreamDefaultController<Uint8Array>, text = "") {
    this.stopped = true;
    this.options.signal?.removeEventListener("abort", this.stop);
    try {
      if (text) controller.enqueue(encoder.encode(text));
      controller.close();
    } catch {
      // Already cancelled by the reader: nothing to close.
    }
  }
}
