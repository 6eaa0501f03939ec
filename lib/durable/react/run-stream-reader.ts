import { KeptChunks } from "./kept-chunks";
import { SseParser } from "./sse-parser";
import { emptyStreamState, type RunStreamOptions, RunStreamError, type RunStreamState } from "./types";

/**
 * The stream reader, without React: the hook wraps it; tests drive it with a fake fetch and
 * fake timers. It fetches the stream route (fetch, not EventSource, which cannot send the bearer;
 * docs/decisions.md, "Run streams over SSE, read by fetch"), and after a drop reconnects with
 * `Last-Event-ID`: at once when the server ended the response cleanly after a healthy connection
 * (its budget cut), else after 1 s, doubling to 5 s while drops repeat. A connection is healthy
 * when it lasted `minDelayMs` or brought a chunk. It stops for good at the `end` event, or on a
 * 4xx other than 408 and 429 (an unknown run and a wrong token are the same 404).
 */
export class RunStreamReader {
  state: RunStreamState = emptyStreamState();
  private readonly minDelay: number;
  private readonly maxDelay: number;
  private delay: number;
  private readonly chunks: KeptChunks;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private inFlight: AbortController | null = null;
  private stopped = true;
  private connections = 0;

  constructor(
    readonly id: string,
    private readonly options: RunStreamOptions,
    private readonly onChange: (state: RunStreamState) => void = () => {},
  ) {
    this.minDelay = options.minDelayMs ?? 1000;
    this.maxDelay = options.maxDelayMs ?? 5000;
    this.delay = this.minDelay;
    this.chunks = new KeptChunks(options.from ?? 0);
  }

  /** Connects now. */
  start(): void {
    if (this.state.done) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops for good: the connection is dropped and nothing more is read. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.inFlight?.abort();
    this.inFlight = null;
  }

  private schedule(ms: number) {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, ms);
  }

  private update(patch: Partial<RunStreamState>) {
    this.state = { ...this.state, ...patch };
    this.onChange(this.state);
  }

  /** `?from=` on the first connection; the reconnects say where they are with Last-Event-ID. */
  private url(first: boolean): string {
    const base = (this.options.baseUrl ?? "/api/durable").replace(/\/+$/, "");
    const from = first ? this.options.from : undefined;
    return `${base}/runs/${encodeURIComponent(this.id)}/stream${from ? `?from=${from}` : ""}`;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const controller = new AbortController();
    this.inFlight = controller;
    const doFetch = this.options.fetch ?? globalThis.fetch;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.token}`,
      accept: "text/event-stream",
    };
    const first = this.connections++ === 0;
    // The last seq read: the server sends only what comes after it.
    if (!first && this.chunks.lastSeq > 0) headers["last-event-id"] = String(this.chunks.lastSeq);
    const openedAt = Date.now();
    let chunksBefore = -1;
    try {
      const response = await doFetch(this.url(first), { headers, cache: "no-store", signal: controller.signal });
      if (!response.ok || !response.body) return await this.refused(response, controller.signal);
      if (this.state.error) this.update({ error: null });
      chunksBefore = this.chunks.lastSeq;
      const reader = response.body.getReader();
      const parser = new SseParser();
      for (;;) {
        const { done, value } = await reader.read();
        if (controller.signal.aborted) return;
        if (done) break;
        const patch = this.chunks.apply(parser.push(value));
        if (patch) this.update(patch);
        if (this.state.done) {
          reader.cancel().catch(() => {});
          return this.stop();
        }
      }
      // The server cut the response without `end` (its budget): resume from the last seq.
      if (this.healthy(openedAt, chunksBefore)) {
        this.delay = this.minDelay;
        return this.schedule(0);
      }
      this.schedule(this.backOff());
    } catch (e) {
      if (controller.signal.aborted) return;
      this.update({ error: new RunStreamError(0, "network_error", (e as Error)?.message ?? String(e)) });
      if (chunksBefore >= 0 && this.healthy(openedAt, chunksBefore)) this.delay = this.minDelay;
      this.schedule(this.backOff());
    } finally {
      if (this.inFlight === controller) this.inFlight = null;
    }
  }

  /** An answer that is not a stream: its error is shown; a 4xx stops the reader, the rest retry. */
  private async refused(response: Response, signal: AbortSignal): Promise<void> {
    const body = await response.json().catch(() => null);
    if (signal.aborted) return;
    this.update({
      error: new RunStreamError(
        response.status,
        body?.error?.code ?? "http_error",
        body?.error?.message ?? `stream route answered ${response.status}`,
      ),
    });
    const status = response.status;
    // A 4xx will not fix itself (unknown run, wrong token, bad from); a 5xx or 429 may.
    if (status >= 400 && status < 500 && status !== 408 && status !== 429) return this.stop();
    this.schedule(this.backOff());
  }

  private healthy(openedAt: number, seqBefore: number): boolean {
    return this.chunks.lastSeq > seqBefore || Date.now() - openedAt >= this.minDelay;
  }

  /** The wait before the next reconnect after a failure; the one after it doubles, up to the cap. */
  private backOff(): number {
    const wait = this.delay;
    this.delay = Math.min(this.maxDelay, this.delay * 2);
    return wait;
  }
}
