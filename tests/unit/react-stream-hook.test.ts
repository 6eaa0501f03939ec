// The run-stream hook of lib/durable/react.ts: its SSE parser fed at arbitrary byte boundaries, and
// its reader (RunStreamReader) driven with a fake fetch whose bodies the test writes, breaks and
// closes, under fake timers: reconnects with Last-Event-ID and their backoff, dropping broken
// chunks and a step's earlier attempts, the text, and stopping at `end`. The hook itself is
// rendered with react-dom/server (effects do not run there: it must render without fetching).
// tests/routes/stream.test.ts checks the server side of the same wire format.
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  type RunStreamChunk,
  RunStreamReader,
  type RunStreamState,
  type SseEvent,
  SseParser,
  useDurableStream,
} from "@/lib/durable/react";

const encoder = new TextEncoder();

function chunk(seq: number, data: unknown, more: Partial<RunStreamChunk> = {}): RunStreamChunk {
  return { seq, stepId: "say", attempt: 1, data, broken: false, ...more };
}
/** The wire form the stream route writes (tests/routes/stream.test.ts checks the route writes it). */
const wire = (c: RunStreamChunk) => `id: ${c.seq}\nevent: chunk\ndata: ${JSON.stringify(c)}\n\n`;
const endWire = (status: string) => `event: end\ndata: ${JSON.stringify({ status })}\n\n`;

describe("SseParser", () => {
  const text =
    ": open\r\n\r\n" +
    `id: 1\r\nevent: chunk\r\ndata: ${JSON.stringify(chunk(1, "héllo 🙂 "))}\r\n\r\n` +
    `id: 2\revent: chunk\rdata: ${JSON.stringify(chunk(2, "wörld"))}\r\r` +
    `id:3\nevent:chunk\ndata:${JSON.stringify(chunk(3, "!"))}\n\n` +
    ": ping\n\n" +
    "data: line one\ndata:  line two\nretry: 10\nunknown: x\n\n" +
    "id: 4\nevent: ignored-without-data\n\n" +
    endWire("completed");
  const expected: SseEvent[] = [
    { type: "chunk", id: "1", data: JSON.stringify(chunk(1, "héllo 🙂 ")) },
    { type: "chunk", id: "2", data: JSON.stringify(chunk(2, "wörld")) },
    { type: "chunk", id: "3", data: JSON.stringify(chunk(3, "!")) },
    { type: "message", id: "3", data: "line one\n line two" },
    { type: "end", id: "4", data: '{"status":"completed"}' },
  ];
  const bytes = encoder.encode(text);

  it("parses CRLF, CR and LF lines, comments, multi-line data, and ids that carry over", () => {
    const parser = new SseParser();
    expect(parser.push(bytes)).toEqual(expected);
    expect(parser.lastEventId).toBe("4");
  });

  it("gives the same events whichever two bytes a chunk boundary falls between (a CRLF, a UTF-8 character)", () => {
    for (let cut = 0; cut <= bytes.length; cut++) {
      const parser = new SseParser();
      const events = [...parser.push(bytes.slice(0, cut)), ...parser.push(bytes.slice(cut))];
      expect(events, `cut at byte ${cut}`).toEqual(expected);
    }
  });

  it("and for random splits into many pieces, down to single bytes", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let round = 0; round < 200; round++) {
      const parser = new SseParser();
      const events: SseEvent[] = [];
      for (let at = 0; at < bytes.length; ) {
        const size = round === 0 ? 1 : 1 + Math.floor(random() * 12);
        events.push(...parser.push(bytes.slice(at, at + size)));
        at += size;
      }
      expect(events).toEqual(expected);
    }
  });

  it("dispatches nothing of an event cut before its blank line, and does not count its id", () => {
    const parser = new SseParser();
    const events = parser.push(`${wire(chunk(1, "a"))}id: 2\nevent: chunk\ndata: {"seq":2`);
    expect(events.map((e) => e.id)).toEqual(["1"]);
    expect(parser.lastEventId).toBe("1");
  });
});

/** One response body the test writes into, closes (a clean end) or breaks (a dropped connection). */
class FakeBody {
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  cancelled = false;
  readonly stream = new ReadableStream<Uint8Array>({
    start: (controller) => {
      this.controller = controller;
    },
    cancel: () => {
      this.cancelled = true;
    },
  });
  write(text: string | Uint8Array) {
    this.controller.enqueue(typeof text === "string" ? encoder.encode(text) : text);
  }
  close() {
    this.controller.close();
  }
  break() {
    this.controller.error(new TypeError("network connection lost"));
  }
}

/** "stream": a body the test drives; "empty": a 200 whose body ends at once. */
type Answer = "stream" | "empty" | { http: number; body?: unknown } | Error;

/** A fetch that opens a FakeBody per call (or answers from the script), and records each call. */
function fakeServer(...script: Answer[]) {
  const calls: { at: number; url: string; headers: Headers; init: RequestInit }[] = [];
  const bodies: FakeBody[] = [];
  const fetch = vi.fn(async (url: string | URL | Request, init: RequestInit = {}) => {
    calls.push({ at: Date.now(), url: String(url), headers: new Headers(init.headers), init });
    const answer = script[calls.length - 1] ?? "stream";
    if (answer instanceof Error) throw answer;
    if (answer === "empty") return new Response("", { status: 200, headers: { "content-type": "text/event-stream" } });
    if (answer !== "stream") {
      return new Response(JSON.stringify(answer.body ?? null), {
        status: answer.http,
        headers: { "content-type": "application/json" },
      });
    }
    const body = new FakeBody();
    bodies.push(body);
    // As a real fetch: aborting the request errors its body.
    init.signal?.addEventListener("abort", () => {
      try {
        body.break();
      } catch {
        // already closed
      }
    });
    return new Response(body.stream, { status: 200, headers: { "content-type": "text/event-stream" } });
  });
  return {
    fetch: fetch as unknown as typeof globalThis.fetch,
    calls,
    bodies,
    body: () => bodies.at(-1)!,
    lastEventIds: () => calls.map((c) => c.headers.get("last-event-id")),
  };
}

let t0 = 0;
beforeEach(() => {
  vi.useFakeTimers();
  t0 = Date.now();
});
afterEach(() => {
  vi.useRealTimers();
});

const settle = () => vi.advanceTimersByTimeAsync(0);

function reader(
  server: ReturnType<typeof fakeServer>,
  extra: Partial<ConstructorParameters<typeof RunStreamReader>[1]> = {},
) {
  const states: RunStreamState[] = [];
  const r = new RunStreamReader("run/1", { token: "tok-1", fetch: server.fetch, ...extra }, (s) => states.push(s));
  return { r, states, last: () => states.at(-1) ?? r.state };
}

const seqs = (state: RunStreamState) => state.chunks.map((c) => c.seq);

describe("RunStreamReader", () => {
  it("fetches the route with the bearer, no cache, no Last-Event-ID at first; ?from= when given", async () => {
    const server = fakeServer();
    const { r } = reader(server, { baseUrl: "https://app.example/api/durable/" });
    r.start();
    await settle();
    expect(server.calls[0]!.url).toBe("https://app.example/api/durable/runs/run%2F1/stream");
    expect(server.calls[0]!.headers.get("authorization")).toBe("Bearer tok-1");
    expect(server.calls[0]!.headers.get("accept")).toBe("text/event-stream");
    expect(server.calls[0]!.headers.get("last-event-id")).toBeNull();
    expect(server.calls[0]!.init.cache).toBe("no-store");
    r.stop();

    const from = fakeServer();
    const resumed = reader(from, { from: 5 });
    resumed.r.start();
    await settle();
    expect(from.calls[0]!.url).toBe("/api/durable/runs/run%2F1/stream?from=5");
    // A drop before any chunk: the reconnect says where it is with Last-Event-ID.
    from.body().break();
    await vi.advanceTimersByTimeAsync(1000);
    expect(from.lastEventIds()).toEqual([null, "5"]);
    // And a chunk at or below `from` is not taken.
    from.body().write(wire(chunk(5, "old")) + wire(chunk(6, "new")));
    await settle();
    expect(seqs(resumed.last())).toEqual([6]);
    resumed.r.stop();
  });

  it("shows chunks as they arrive, whatever the byte boundaries, with their text", async () => {
    const server = fakeServer();
    const { r, last } = reader(server);
    r.start();
    await settle();
    const bytes = encoder.encode(`: open\n\n${wire(chunk(1, "Grüß "))}${wire(chunk(2, "dich 🙂"))}`);
    const cuts = [0, 3, 15, 40, 91, 92, 130, 131, 132, bytes.length - 3, bytes.length];
    for (let i = 1; i < cuts.length; i++) {
      server.body().write(bytes.slice(cuts[i - 1], cuts[i]));
      await settle();
    }
    expect(last()).toMatchObject({ text: "Grüß dich 🙂", status: null, done: false, error: null });
    expect(last().chunks).toEqual([chunk(1, "Grüß "), chunk(2, "dich 🙂")]);
    expect(last().textOf("say")).toBe("Grüß dich 🙂");
    expect(last().textOf("other")).toBe("");
    r.stop();
  });

  it("reconnects with Last-Event-ID after a drop mid-event, and never keeps a seq twice", async () => {
    const server = fakeServer();
    const { r, last } = reader(server);
    r.start();
    await settle();
    server.body().write(wire(chunk(1, "a")) + wire(chunk(2, "b")) + wire(chunk(3, "c")).slice(0, 30));
    await settle();
    server.body().break();
    await settle();
    expect(seqs(last())).toEqual([1, 2]);
    expect(last().error).toMatchObject({ name: "RunStreamError", status: 0, code: "network_error" });
    // The connection brought chunks, so it was healthy: the first wait is 1 s.
    await vi.advanceTimersByTimeAsync(999);
    expect(server.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(server.lastEventIds()).toEqual([null, "2"]);
    // The answer to the reconnect clears the error; a repeated seq (2) is dropped.
    expect(last().error).toBeNull();
    server.body().write(wire(chunk(2, "b")) + wire(chunk(3, "c")) + wire(chunk(4, "d")) + endWire("completed"));
    await settle();
    expect(seqs(last())).toEqual([1, 2, 3, 4]);
    expect(last()).toMatchObject({ text: "abcd", status: "completed", done: true, error: null });
    expect(server.body().cancelled).toBe(true);
  });

  it("reconnects at once after a clean cut (the budget); failures back off 1 → 2 → 4 → 5 s", async () => {
    const server = fakeServer("stream", "empty", "empty", "empty", "empty", "empty", "stream");
    const { r } = reader(server);
    r.start();
    await settle();
    server.body().write(wire(chunk(1, "a")));
    await vi.advanceTimersByTimeAsync(55_000);
    server.body().close(); // the budget cut
    await settle();
    expect(server.calls).toHaveLength(2);
    expect(server.calls[1]!.at - t0).toBe(55_000);
    expect(server.lastEventIds()).toEqual([null, "1"]);

    // That one and the next end at once with nothing new: failures, retried 1, 2, 4, 5, 5 s apart.
    await vi.advanceTimersByTimeAsync(17_000);
    expect(server.calls).toHaveLength(7);
    const gaps = server.calls.slice(2).map((c, i) => c.at - server.calls[i + 1]!.at);
    expect(gaps).toEqual([1000, 2000, 4000, 5000, 5000]);
    expect(server.lastEventIds().slice(2)).toEqual(["1", "1", "1", "1", "1"]);
    // A healthy connection (here one that brings a chunk, however short) resets the backoff.
    server.body().write(wire(chunk(2, "b")));
    await settle();
    server.body().break();
    await vi.advanceTimersByTimeAsync(999);
    expect(server.calls).toHaveLength(7);
    await vi.advanceTimersByTimeAsync(1);
    expect(server.calls).toHaveLength(8);
    expect(server.lastEventIds().at(-1)).toBe("2");
    r.stop();
  });

  it("drops a step's earlier attempt once a later attempt streams; keeps the text per step", async () => {
    const server = fakeServer();
    const { r, last } = reader(server);
    r.start();
    await settle();
    server.body().write(wire(chunk(1, "Hel")) + wire(chunk(2, "[", { stepId: "other" })) + wire(chunk(3, "lo")));
    await settle();
    expect(last().text).toBe("Hello[");
    // The first attempt of "say" was lost: its second attempt streams.
    server.body().write(wire(chunk(4, "Hi", { attempt: 2 })));
    await settle();
    expect(seqs(last())).toEqual([2, 4]);
    expect(last().text).toBe("Hi["); // "say" keeps its place: it streamed first
    expect(last().textOf("say")).toBe("Hi");
    // A straggler of the earlier attempt (it cannot come from the route, whose owner is fenced) is dropped too.
    server
      .body()
      .write(
        wire(chunk(5, "!", { attempt: 1 })) +
          wire(chunk(6, "]", { stepId: "other" })) +
          wire(chunk(7, { n: 1 }, { attempt: 2 })) +
          wire(chunk(8, " there", { attempt: 2 })),
      );
    await settle();
    expect(seqs(last())).toEqual([2, 4, 6, 7, 8]);
    expect(last().text).toBe("Hi there[]"); // non-string data is kept as a chunk, not as text
    expect(last().textOf("other")).toBe("[]");
    r.stop();
  });

  it("drops the chunks the server marks broken", async () => {
    const server = fakeServer();
    const { r, last } = reader(server);
    r.start();
    await settle();
    server
      .body()
      .write(
        wire(chunk(1, "a", { broken: true })) +
          wire(chunk(2, "b", { broken: true })) +
          wire(chunk(3, "A", { attempt: 2 })) +
          wire(chunk(4, "B", { attempt: 2 })) +
          wire(chunk(5, "x", { stepId: "failed", broken: true })) +
          endWire("completed"),
      );
    await settle();
    expect(last().chunks).toEqual([chunk(3, "A", { attempt: 2 }), chunk(4, "B", { attempt: 2 })]);
    expect(last()).toMatchObject({ text: "AB", done: true, status: "completed" });
    expect(last().textOf("failed")).toBe("");
  });

  it("stops for good at `end`: nothing after it is taken, and it never reconnects", async () => {
    const server = fakeServer();
    const { r, last, states } = reader(server);
    r.start();
    await settle();
    server.body().write(wire(chunk(1, "a")) + endWire("failed") + wire(chunk(2, "late")));
    await settle();
    expect(last()).toMatchObject({ text: "a", status: "failed", done: true });
    expect(server.body().cancelled).toBe(true);
    const count = states.length;
    await vi.advanceTimersByTimeAsync(120_000);
    expect(server.calls).toHaveLength(1);
    expect(states).toHaveLength(count);
    r.start(); // a done reader does not start again
    await settle();
    expect(server.calls).toHaveLength(1);
  });

  it("stops on a 404 (unknown run or wrong token); backs off and retries a 5xx or a failed request", async () => {
    const notFound = fakeServer({
      http: 404,
      body: { error: { code: "run_not_found", message: 'run "run/1" not found' } },
    });
    const gone = reader(notFound);
    gone.r.start();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(notFound.calls).toHaveLength(1);
    expect(gone.last()).toMatchObject({ done: false, error: { status: 404, code: "run_not_found" } });

    const flaky = fakeServer(
      { http: 503, body: { error: { code: "secret_missing", message: "no" } } },
      new TypeError("offline"),
    );
    const back = reader(flaky);
    back.r.start();
    await settle();
    expect(back.last().error).toMatchObject({ status: 503, code: "secret_missing" });
    await vi.advanceTimersByTimeAsync(1000);
    expect(back.last().error).toMatchObject({ status: 0, code: "network_error", message: "offline" });
    await vi.advanceTimersByTimeAsync(2000);
    expect(flaky.calls.map((c) => c.at - flaky.calls[0]!.at)).toEqual([0, 1000, 3000]);
    expect(back.last().error).toBeNull();
    flaky.body().write(wire(chunk(1, "ok")) + endWire("completed"));
    await settle();
    expect(back.last()).toMatchObject({ text: "ok", done: true });
  });

  it("stop() drops the connection, and nothing read after it counts", async () => {
    const server = fakeServer();
    const { r, states } = reader(server);
    r.start();
    await settle();
    server.body().write(wire(chunk(1, "a")));
    await settle();
    const count = states.length;
    r.stop();
    await settle();
    expect(server.calls[0]!.init.signal?.aborted).toBe(true); // the request and its body are dropped
    await vi.advanceTimersByTimeAsync(60_000);
    expect(server.calls).toHaveLength(1);
    expect(states).toHaveLength(count);
  });
});

function Probe(props: { fetch: typeof fetch }) {
  const { chunks, text, status, done, error, textOf } = useDurableStream("run/1", { token: "tok-1", ...props });
  return createElement("pre", null, JSON.stringify({ chunks, text, status, done, error, textOf: textOf("say") }));
}

describe("useDurableStream (server render)", () => {
  it("renders the empty state without fetching", () => {
    const server = fakeServer();
    const html = renderToString(createElement(Probe, { fetch: server.fetch }));
    expect(JSON.parse(html.replace(/^<pre>|<\/pre>$/g, "").replace(/&quot;/g, '"'))).toEqual({
      chunks: [],
      text: "",
      status: null,
      done: false,
      error: null,
      textOf: "",
    });
    expect(server.calls).toHaveLength(0);
  });
});
