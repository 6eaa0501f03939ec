"use client";
// Only types come from the engine: this file is bundled for the browser, which must not get zod,
// Kysely or node:crypto.
import { useCallback, useEffect, useRef, useState } from "react";
import type { RunStatus, RunStatusValue } from "./schemas";
import type { StreamChunk } from "./store";

/**
 * Polls a run's status route (`GET /api/durable/runs/{id}` with the run's status token) while the
 * run is not finished. Each poll also moves the run along: the route heals a dead run and advances
 * a due one after answering, so a page that watches a run needs no cron to see it progress.
 *
 * Polling starts 1 s apart and backs off (×2) to 5 s while nothing changes; any change goes back
 * to 1 s. It pauses while the tab is hidden, and stops for good once the run is completed, failed
 * or cancelled, or the route answers a 4xx (an unknown run and a wrong token are the same 404).
 */

export interface RunPollOptions {
  /** The run's status token (`durable.statusToken(id)` on the server). Never the admin secret. */
  token: string;
  /** A status the server already read: shown at once, first poll after `minDelayMs`. */
  initial?: RunStatus | null;
  /** Where the status route is mounted ("/api/durable/runs"). */
  endpoint?: string;
  minDelayMs?: number;
  maxDelayMs?: number;
  fetch?: typeof fetch;
  /** Is the page hidden now? (the document's visibility; tests pass their own) */
  isHidden?: () => boolean;
}

export interface RunPollState {
  run: RunStatus | null;
  /** The last poll's failure; cleared by the next success. The last good `run` is kept. */
  error: RunPollError | null;
  /** True until the first status is known. */
  isLoading: boolean;
}

/** A failed poll: `status` is the HTTP status (0 when the request itself failed). */
export class RunPollError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "RunPollError";
  }
}

const TERMINAL = new Set(["completed", "failed", "cancelled"]);
export const isTerminal = (run: RunStatus | null | undefined) => !!run && TERMINAL.has(run.status);

/** What counts as "changed" for the backoff: status, the wait, and every step's state. */
const fingerprint = (run: RunStatus) =>
  [
    run.status,
    run.updatedAt,
    run.waitingFor?.kind,
    run.waitingFor?.name,
    ...run.steps.map((s) => `${s.id}:${s.status}:${s.attempt}`),
  ].join("|");

/** The polling loop, without React: the hook below wraps it; tests drive it with a fake fetch and fake timers. */
export class RunPoller {
  state: RunPollState;
  private readonly minDelay: number;
  private readonly maxDelay: number;
  private delay: number;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private inFlight: AbortController | null = null;
  private paused = false;
  private stopped = true;
  private last: string | null;

  constructor(
    readonly id: string,
    private readonly options: RunPollOptions,
    private readonly onChange: (state: RunPollState) => void = () => {},
  ) {
    this.minDelay = options.minDelayMs ?? 1000;
    this.maxDelay = options.maxDelayMs ?? 5000;
    this.delay = this.minDelay;
    const initial = options.initial ?? null;
    this.state = { run: initial, error: null, isLoading: !initial };
    this.last = initial ? fingerprint(initial) : null;
  }

  /**
   * Starts polling: at once without an initial status, else after the first delay. Nothing to do
   * for a finished run.
   */
  start(): void {
    this.stopped = false;
    if (isTerminal(this.state.run)) return;
    this.schedule(this.state.run ? this.minDelay : 0);
  }

  /** Stops for good: no more requests, and an answer still in flight is dropped. */
  stop(): void {
    this.stopped = true;
    this.clearTimer();
    this.inFlight?.abort();
    this.inFlight = null;
  }

  /** Polls now and from the shortest delay, even after the run finished (e.g. after a retry). */
  refresh(): void {
    this.stopped = false;
    this.delay = this.minDelay;
    this.clearTimer();
    void this.poll();
  }

  /** Call on `visibilitychange`: polling paused by a hidden tab resumes at once when it shows. */
  visibilityChanged(): void {
    if (this.paused && !this.hidden()) {
      this.paused = false;
      this.delay = this.minDelay;
      void this.poll();
    }
  }

  private hidden(): boolean {
    if (this.options.isHidden) return this.options.isHidden();
    return typeof document !== "undefined" && document.visibilityState === "hidden";
  }

  private clearTimer() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(ms: number) {
    this.clearTimer();
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.poll();
    }, ms);
  }

  private update(patch: Partial<RunPollState>) {
    this.state = { ...this.state, ...patch };
    this.onChange(this.state);
  }

  private async poll(): Promise<void> {
    if (this.stopped) return;
    if (this.hidden()) {
      this.paused = true;
      return;
    }
    this.inFlight?.abort();
    const controller = new AbortController();
    this.inFlight = controller;
    const endpoint = this.options.endpoint ?? "/api/durable/runs";
    const doFetch = this.options.fetch ?? globalThis.fetch;
    let next: number;
    try {
      const response = await doFetch(`${endpoint}/${encodeURIComponent(this.id)}`, {
        headers: { authorization: `Bearer ${this.options.token}` },
        cache: "no-store",
        signal: controller.signal,
      });
      const body = await response.json().catch(() => null);
      if (controller.signal.aborted) return;
      if (!response.ok) {
        const error = new RunPollError(
          response.status,
          body?.error?.code ?? "http_error",
          body?.error?.message ?? `status route answered ${response.status}`,
        );
        this.update({ error, isLoading: false });
        // A 4xx will not fix itself (unknown run, wrong token); a 5xx or 429 may.
        if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429)
          return this.stop();
        next = this.backOff();
      } else {
        const run = body as RunStatus;
        const print = fingerprint(run);
        if (print !== this.last) this.delay = this.minDelay;
        next = print === this.last ? this.backOff() : this.delay;
        this.last = print;
        this.update({ run, error: null, isLoading: false });
        if (isTerminal(run)) return this.stop();
      }
    } catch (e) {
      if (controller.signal.aborted) return;
      this.update({
        error: new RunPollError(0, "network_error", (e as Error)?.message ?? String(e)),
        isLoading: false,
      });
      next = this.backOff();
    } finally {
      if (this.inFlight === controller) this.inFlight = null;
    }
    this.schedule(next);
  }

  /** Nothing changed (or the poll failed): double the delay, up to the cap. */
  private backOff(): number {
    this.delay = Math.min(this.maxDelay, this.delay * 2);
    return this.delay;
  }
}

/**
 * Live status of one run, for a client component.
 *
 * @example
 * "use client";
 * import { useDurableRun } from "@/lib/durable/react";
 *
 * export function RunProgress({ id, token }: { id: string; token: string }) {
 *   const { run, error, isLoading } = useDurableRun(id, { token });
 *   if (isLoading) return <p>Loading…</p>;
 *   if (!run) return <p>{error?.message}</p>;
 *   return <p>{run.status}: {run.steps.filter((s) => s.status === "completed").length} steps done</p>;
 * }
 */
export function useDurableRun(id: string, options: RunPollOptions): RunPollState & { refresh: () => void } {
  const [state, setState] = useState<RunPollState>(() => new RunPoller(id, options).state);
  const poller = useRef<RunPoller | null>(null);
  // The latest options without restarting the loop on every render (objects are new each time).
  const latest = useRef(options);
  latest.current = options;
  const { token, endpoint, minDelayMs, maxDelayMs } = options;

  useEffect(() => {
    const current = new RunPoller(id, { ...latest.current, token, endpoint, minDelayMs, maxDelayMs }, setState);
    poller.current = current;
    setState(current.state);
    const onVisibility = () => current.visibilityChanged();
    document.addEventListener("visibilitychange", onVisibility);
    current.start();
    return () => {
      document.removeEventListener("visibilitychange", onVisibility);
      current.stop();
    };
  }, [id, token, endpoint, minDelayMs, maxDelayMs]);

  const refresh = useCallback(() => poller.current?.refresh(), []);
  return { ...state, refresh };
}

// ---------------------------------------------------------------------------------------------
// Run streams (docs/model.md, "Run streams"; docs/decisions.md, "Run streams over SSE, read by fetch")

/** One chunk of a run's stream, as the stream route sends it. */
export type RunStreamChunk = StreamChunk;

/** One dispatched Server-Sent Event: its type ("message" when none was named), data and last event id. */
export interface SseEvent {
  type: string;
  data: string;
  id: string;
}

/**
 * A Server-Sent Events parser (the event-stream format of the HTML standard) fed with bytes as
 * they arrive: a line, a CRLF or a multi-byte character may be split across any two pushes.
 * An event is dispatched only at the blank line that ends it, so a response cut in mid-event
 * yields nothing of that event (and its id does not count as seen).
 */
export class SseParser {
  private readonly decoder = new TextDecoder();
  private buffer = "";
  private type = "";
  private data: string[] = [];
  private idBuffer = "";
  /** The id of the last dispatched event (the spec's "last event ID string"). */
  lastEventId = "";

  push(bytes: Uint8Array | string): SseEvent[] {
    this.buffer += typeof bytes === "string" ? bytes : this.decoder.decode(bytes, { stream: true });
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c !== "\n" && c !== "\r") continue;
      // A CR at the very end may be the first half of a CRLF: wait for the next push.
      if (c === "\r" && i === this.buffer.length - 1) break;
      this.line(this.buffer.slice(start, i), events);
      if (c === "\r" && this.buffer[i + 1] === "\n") i++;
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  private line(line: string, events: SseEvent[]) {
    if (line === "") return this.dispatch(events);
    if (line.startsWith(":")) return; // a comment (": ping")
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.type = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id" && !value.includes("\u0000")) this.idBuffer = value;
  }

  private dispatch(events: SseEvent[]) {
    this.lastEventId = this.idBuffer;
    if (this.data.length > 0)
      events.push({ type: this.type || "message", data: this.data.join("\n"), id: this.idBuffer });
    this.type = "";
    this.data = [];
  }
}

export interface RunStreamOptions {
  /** The run's status token (`durable.statusToken(id)` on the server). Never the admin secret. */
  token: string;
  /** Where the durable routes are mounted ("/api/durable"; an absolute URL for another origin). */
  baseUrl?: string;
  /** The last seq the reader already has: only the chunks after it come (0, all of them). */
  from?: number;
  /** The first wait before reconnecting after a failure (1000 ms); it doubles up to `maxDelayMs` (5000). */
  minDelayMs?: number;
  maxDelayMs?: number;
  fetch?: typeof fetch;
}

export interface RunStreamState {
  /** The chunks kept so far, in seq order: without broken ones and without earlier attempts of a step. */
  chunks: RunStreamChunk[];
  /** The string `data` of the kept chunks, step after step (in the order each step first streamed). */
  text: string;
  /** One step's text: the string `data` of its kept chunks, in order ("" when none). */
  textOf: (stepId: string) => string;
  /** The run's status from the `end` event; null until then. */
  status: RunStatusValue | null;
  /** True once the `end` event came: the run is terminal and every chunk was read. */
  done: boolean;
  /** The last connection's failure; cleared by the next answer. The chunks read so far are kept. */
  error: RunStreamError | null;
}

/** A failed stream connection: `status` is the HTTP status (0 when the request or the body failed). */
export class RunStreamError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "RunStreamError";
  }
}

const emptyStreamState = (): RunStreamState => ({
  chunks: [],
  text: "",
  textOf: () => "",
  status: null,
  done: false,
  error: null,
});

/**
 * The stream reader, without React: the hook below wraps it; tests drive it with a fake fetch and
 * fake timers. It fetches the stream route (fetch, not EventSource, which cannot send the bearer),
 * and after a drop reconnects with `Last-Event-ID`: at once when the server ended the response
 * cleanly after a healthy connection (its budget cut), else after 1 s, doubling to 5 s while drops
 * repeat. A connection is healthy when it lasted `minDelayMs` or brought a chunk. It stops for
 * good at the `end` event, or on a 4xx other than 408 and 429 (an unknown run and a wrong token
 * are the same 404).
 */
export class RunStreamReader {
  state: RunStreamState = emptyStreamState();
  private readonly minDelay: number;
  private readonly maxDelay: number;
  private delay: number;
  private lastSeq: number;
  private kept: RunStreamChunk[] = [];
  private readonly texts = new Map<string, string>();
  private readonly attempts = new Map<string, number>();
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
    this.lastSeq = options.from ?? 0;
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
    if (!first && this.lastSeq > 0) headers["last-event-id"] = String(this.lastSeq);
    const openedAt = Date.now();
    let chunksBefore = -1;
    try {
      const response = await doFetch(this.url(first), { headers, cache: "no-store", signal: controller.signal });
      if (!response.ok || !response.body) {
        const body = await response.json().catch(() => null);
        if (controller.signal.aborted) return;
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
        return this.schedule(this.backOff());
      }
      if (this.state.error) this.update({ error: null });
      chunksBefore = this.lastSeq;
      const reader = response.body.getReader();
      const parser = new SseParser();
      for (;;) {
        const { done, value } = await reader.read();
        if (controller.signal.aborted) return;
        if (done) break;
        this.apply(parser.push(value));
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

  private healthy(openedAt: number, seqBefore: number): boolean {
    return this.lastSeq > seqBefore || Date.now() - openedAt >= this.minDelay;
  }

  /** The wait before the next reconnect after a failure; the one after it doubles, up to the cap. */
  private backOff(): number {
    const wait = this.delay;
    this.delay = Math.min(this.maxDelay, this.delay * 2);
    return wait;
  }

  private apply(events: SseEvent[]) {
    let changed = false;
    let ended: RunStatusValue | null = null;
    for (const event of events) {
      if (event.type === "end") {
        ended = (parseJson(event.data) as { status?: RunStatusValue } | null)?.status ?? null;
        changed = true;
        break;
      }
      if (event.type !== "chunk") continue;
      const chunk = parseJson(event.data) as RunStreamChunk | null;
      // Never the same seq twice, whatever a reconnect sends.
      if (!chunk || typeof chunk.seq !== "number" || chunk.seq <= this.lastSeq) continue;
      this.lastSeq = chunk.seq;
      if (this.keep(chunk)) changed = true;
    }
    if (!changed) return;
    const texts = new Map(this.texts);
    this.update({
      chunks: this.kept.slice(),
      text: [...texts.values()].join(""),
      textOf: (stepId) => texts.get(stepId) ?? "",
      ...(ended === null ? {} : { status: ended, done: true, error: null }),
    });
  }

  /** Keeps a chunk unless it is broken or of an earlier attempt; a later attempt drops the step's earlier ones. */
  private keep(chunk: RunStreamChunk): boolean {
    const top = this.attempts.get(chunk.stepId) ?? 0;
    if (chunk.attempt < top) return false;
    let changed = false;
    if (chunk.attempt > top) {
      this.attempts.set(chunk.stepId, chunk.attempt);
      if (this.texts.has(chunk.stepId)) {
        // The earlier attempt did not complete: its chunks are broken now (docs/model.md, "Run streams").
        this.kept = this.kept.filter((c) => c.stepId !== chunk.stepId);
        this.texts.set(chunk.stepId, "");
        changed = true;
      }
    }
    if (chunk.broken) return changed;
    this.kept.push(chunk);
    const text = typeof chunk.data === "string" ? chunk.data : "";
    this.texts.set(chunk.stepId, (this.texts.get(chunk.stepId) ?? "") + text);
    return true;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * A run's stream, live, for a client component: the chunks kept so far and their text, until the
 * run is terminal. Broken chunks are dropped, and so are a step's earlier attempts once a later
 * attempt streams. A step that fails on its last attempt keeps its chunks here (they are marked
 * broken only on a later read): `status` says the run failed.
 *
 * @example
 * "use client";
 * import { useDurableStream } from "@/lib/durable/react";
 *
 * export function Answer({ id, token }: { id: string; token: string }) {
 *   const { text, done, error } = useDurableStream(id, { token });
 *   return <p>{text}{done ? "" : "▍"}{error ? ` (${error.message}, reconnecting)` : ""}</p>;
 * }
 */
export function useDurableStream(id: string, options: RunStreamOptions): RunStreamState {
  const [state, setState] = useState<RunStreamState>(emptyStreamState);
  const latest = useRef(options);
  latest.current = options;
  const { token, baseUrl, from, minDelayMs, maxDelayMs } = options;

  useEffect(() => {
    const reader = new RunStreamReader(
      id,
      { ...latest.current, token, baseUrl, from, minDelayMs, maxDelayMs },
      setState,
    );
    setState(reader.state);
    reader.start();
    return () => reader.stop();
  }, [id, token, baseUrl, from, minDelayMs, maxDelayMs]);

  return state;
}
