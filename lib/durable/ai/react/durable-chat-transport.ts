import type { ChatRequestOptions, ChatTransport, UIMessage, UIMessageChunk } from "ai";
import { SseParser } from "../../react/sse-parser";

// The client half of the chat (docs/guide/chat.md, "The transport"): an AI SDK ChatTransport for
// useChat over the chat routes. Types only from `ai`: this file is bundled for the browser.

type Resolvable<T> = T | (() => T | Promise<T>);
type HeadersInput = Record<string, string> | Headers;

export interface DurableChatTransportOptions {
  /** The chat POST route; the stream route is `{api}/{chatId}/stream` (default "/api/chat"). */
  api?: string;
  headers?: Resolvable<HeadersInput>;
  /** Extra JSON fields of the POST body (the app's; the route ignores what it does not know). */
  body?: Resolvable<object>;
  fetch?: typeof fetch;
  credentials?: Resolvable<RequestCredentials>;
  /** Reconnects in a row that may fail before the stream errors (default 5). */
  reconnectAttempts?: number;
  /** The first reconnect's delay after a failed one; doubles, at most 5 s (default 250 ms). */
  reconnectDelayMs?: number;
}

/** The state of one answer being read: where the reader is and whether it is over. */
interface Reading {
  chatId: string;
  /** The last event id seen (a seq); "" before any. */
  lastSeq: string;
  /** The answer is complete (`finish` or `[DONE]` came, or the turn is gone): nothing to stop. */
  finished: boolean;
  /** The consumer cancelled the stream, or it ended: read no more. */
  closed: boolean;
  signal: AbortSignal | undefined;
  headers: Headers;
  credentials: RequestCredentials | undefined;
}

const resolve = async <T>(value: Resolvable<T> | undefined): Promise<T | undefined> =>
  typeof value === "function" ? await (value as () => T | Promise<T>)() : value;

function mergeHeaders(...sources: (HeadersInput | undefined)[]): Headers {
  const headers = new Headers();
  for (const source of sources) {
    new Headers(source ?? {}).forEach((value, key) => {
      headers.set(key, value);
    });
  }
  return headers;
}

/** A response that stayed open this long was a working connection, events or not. */
const HEALTHY_MS = 2000;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((done) => {
    const timer = setTimeout(done, ms);
    const early = () => {
      clearTimeout(timer);
      done();
    };
    signal?.addEventListener("abort", early, { once: true });
  });

/**
 * `useChat({ transport: new DurableChatTransport() })`. A POST's answer that ends without `finish`
 * (the function was killed, or its budget ran out) is continued in the same stream from
 * `GET {api}/{chatId}/stream` with `Last-Event-ID`, so the message goes on with no gap and no
 * repeat. `stop()` sends `DELETE {api}/{chatId}/stream`, which cancels the turn's run.
 * `reconnectToStream` (useChat's `resume`) replays the active turn from its beginning, so
 * `resumeStreamIsReplay` is true; null when the chat has none.
 */
export class DurableChatTransport<UI_MESSAGE extends UIMessage = UIMessage> implements ChatTransport<UI_MESSAGE> {
  readonly resumeStreamIsReplay = true;
  private readonly api: string;
  /** Per chat, how many reads began: an abort followed at once by another read is a handover, not a stop. */
  private readonly generations = new Map<string, number>();

  constructor(private readonly options: DurableChatTransportOptions = {}) {
    this.api = options.api ?? "/api/chat";
  }

  async sendMessages(
    options: {
      trigger: "submit-message" | "regenerate-message";
      chatId: string;
      messageId: string | undefined;
      messages: UI_MESSAGE[];
      abortSignal: AbortSignal | undefined;
    } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk>> {
    const reading = await this.begin(options.chatId, options.abortSignal, options.headers);
    const body = {
      ...(await resolve(this.options.body)),
      ...options.body,
      id: options.chatId,
      messages: options.messages,
      trigger: options.trigger,
      messageId: options.messageId,
    };
    reading.headers.set("content-type", "application/json");
    const response = await this.fetchOf()(this.api, {
      method: "POST",
      headers: reading.headers,
      body: JSON.stringify(body),
      credentials: reading.credentials,
      signal: options.abortSignal,
    });
    reading.headers.delete("content-type");
    if (!response.ok || !response.body) throw new Error((await response.text()) || `chat POST: ${response.status}`);
    return this.follow(reading, response.body);
  }

  async reconnectToStream(
    options: { chatId: string; abortSignal?: AbortSignal } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const reading = await this.begin(options.chatId, options.abortSignal, options.headers);
    const response = await this.get(reading);
    if (response === null) return null;
    return this.follow(reading, response);
  }

  private async begin(chatId: string, signal: AbortSignal | undefined, extra?: HeadersInput): Promise<Reading> {
    const generation = (this.generations.get(chatId) ?? 0) + 1;
    this.generations.set(chatId, generation);
    const headers = mergeHeaders(await resolve(this.options.headers), extra);
    const credentials = await resolve(this.options.credentials);
    const reading: Reading = { chatId, lastSeq: "", finished: false, closed: false, signal, headers, credentials };
    signal?.addEventListener("abort", () => this.stopped(reading, generation), { once: true });
    return reading;
  }

  /**
   * useChat aborted a read: `stop()`, or a resume that replaces this one (AbstractChat aborts the
   * old resume and starts the new read in the same task). A stop cancels the turn: DELETE, with
   * keepalive so that it goes out even while the page unloads.
   */
  private stopped(reading: Reading, generation: number): void {
    setTimeout(() => {
      if (reading.finished || this.generations.get(reading.chatId) !== generation) return;
      void this.fetchOf()(this.streamUrl(reading.chatId), {
        method: "DELETE",
        headers: reading.headers,
        credentials: reading.credentials,
        keepalive: true,
      }).catch(() => {});
    }, 0);
  }

  private fetchOf(): typeof fetch {
    return this.options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  private streamUrl(chatId: string): string {
    const [path, query = ""] = this.api.split(/(?=[?#])/, 2);
    return `${path!.replace(/\/$/, "")}/${encodeURIComponent(chatId)}/stream${query}`;
  }

  /** GET the stream route, from after `lastSeq` when there is one; null on 204 (nothing to resume). */
  private async get(reading: Reading): Promise<ReadableStream<Uint8Array> | null> {
    const headers = new Headers(reading.headers);
    if (reading.lastSeq !== "") headers.set("last-event-id", reading.lastSeq);
    const response = await this.fetchOf()(this.streamUrl(reading.chatId), {
      method: "GET",
      headers,
      credentials: reading.credentials,
      signal: reading.signal,
    });
    if (response.status === 204) return null;
    if (!response.ok || !response.body) throw new Error((await response.text()) || `chat stream: ${response.status}`);
    return response.body;
  }

  /** The chunks of `first`, then of each reconnect, as one stream, until `finish` or `[DONE]`. */
  private follow(reading: Reading, first: ReadableStream<Uint8Array>): ReadableStream<UIMessageChunk> {
    const attempts = this.options.reconnectAttempts ?? 5;
    const baseDelay = this.options.reconnectDelayMs ?? 250;
    let body: ReadableStream<Uint8Array> | null = first;
    return new ReadableStream<UIMessageChunk>({
      pull: async (controller) => {
        let failures = 0;
        for (;;) {
          if (reading.signal?.aborted || reading.closed) return this.close(reading, controller);
          try {
            body ??= await this.get(reading);
            if (body === null) {
              reading.finished = true; // the turn is gone: nothing more will come
              return this.close(reading, controller);
            }
            const since = Date.now();
            const got = await this.pump(reading, body, controller);
            body = null;
            if (reading.finished) return this.close(reading, controller);
            // Healthy (it brought events, or lasted: a quiet turn's response cut at the budget):
            // reconnect at once. Only quick empty ones count as failures.
            if (got > 0 || Date.now() - since >= HEALTHY_MS) failures = 0;
            else if (++failures > attempts) throw new Error("the chat stream broke off and could not be resumed");
            else await sleep(Math.min(5000, baseDelay * 2 ** (failures - 1)), reading.signal);
          } catch (e) {
            body = null;
            if (reading.signal?.aborted) return this.close(reading, controller);
            if (++failures > attempts) return controller.error(e);
            await sleep(Math.min(5000, baseDelay * 2 ** (failures - 1)), reading.signal);
          }
        }
      },
      cancel: () => {
        reading.closed = true;
      },
    });
  }

  /** Reads one response to its end, enqueuing its chunks; answers how many events it brought. */
  private async pump(
    reading: Reading,
    body: ReadableStream<Uint8Array>,
    controller: ReadableStreamDefaultController<UIMessageChunk>,
  ): Promise<number> {
    const parser = new SseParser();
    const reader = body.getReader();
    let events = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return events;
        for (const event of parser.push(value)) {
          events++;
          if (event.id !== "") reading.lastSeq = event.id;
          if (event.data === "[DONE]") {
            reading.finished = true;
            continue;
          }
          const chunk = JSON.parse(event.data) as UIMessageChunk;
          controller.enqueue(chunk);
          if (chunk.type === "finish") reading.finished = true;
        }
        if (reading.finished || reading.closed) return events;
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }

  private close(reading: Reading, controller: ReadableStreamDefaultController<UIMessageChunk>): void {
    reading.closed = true;
    try {
      controller.close();
    } catch {
      // Already closed or cancelled.
    }
  }
}
