// GET /api/durable/runs/{id}/stream: a run's stream as Server-Sent Events (docs/model.md, "Run
// streams"; docs/decisions.md, "Run streams over SSE, read by fetch"). The handlers are called
// directly on PGlite; the events are read off the response body with a parser of this file's own,
// so the wire format is checked independently of the client in lib/durable/react.ts.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { sql } from "kysely";
import { connect, createDurable, defineWorkflow, FatalStepError } from "@/lib/durable";
import { createDurableRoutes, type DurableRoutes } from "@/lib/durable/next";
import { until } from "../helpers/until";
import { admin, approval, createFixture, expectRefused, fingerprint, params, type RouteFixture, url } from "./harness";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How many words each gated run may say so far (no entry: all of them). */
const allowance = new Map<string, number>();
/** When each word's chunk was stored: `${runId}:${seq}` → Date.now() after its flush resolved. */
const committedAt = new Map<string, number>();

const talker = defineWorkflow({
  name: "talker",
  input: z.object({
    words: z.array(z.string()),
    pauseMs: z.number().default(0),
    failFirst: z.boolean().default(false),
    failAlways: z.boolean().default(false),
  }),
  async run(ctx, input) {
    return ctx.step.run(
      "say",
      async (s) => {
        const out = ctx.stream("say");
        for (const [i, word] of input.words.entries()) {
          while ((allowance.get(ctx.runId) ?? Number.POSITIVE_INFINITY) <= i) await sleep(2);
          if (input.pauseMs > 0) await sleep(input.pauseMs);
          out.write(word);
          await out.flush();
          if (s.attempt === 1) committedAt.set(`${ctx.runId}:${i + 1}`, Date.now());
        }
        if (input.failAlways) throw new FatalStepError("it cannot be said");
        if (input.failFirst && s.attempt === 1) throw new Error("the first attempt breaks after streaming");
        return input.words.length;
      },
      { retries: 1, retryDelay: 0 },
    );
  },
});

let fx: RouteFixture;
beforeAll(async () => {
  fx = await createFixture({}, [talker]);
});
afterAll(() => fx.durable.close());

const words = (n: number, prefix = "w") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const tokenOf = (id: string) => bearer(fx.durable.statusToken(id));

function streamOf(
  id: string,
  headers: Record<string, string> = {},
  query = "",
  routes: DurableRoutes = fx.routes,
  signal?: AbortSignal,
) {
  const request = new Request(url(`/runs/${encodeURIComponent(id)}/stream${query}`), {
    headers,
    ...(signal ? { signal } : {}),
  });
  return routes.stream.GET(request, params(id));
}

async function completedTalk(id: string, input: z.input<typeof talker.input>) {
  await fx.durable.start(talker, input, { id });
  const terminal = ["completed", "failed", "cancelled"];
  for (let i = 0; i < 5 && !terminal.includes((await fx.durable.status(id))!.status); i++) await fx.durable.advance(id);
}

interface WireEvent {
  id?: string;
  event?: string;
  data?: any;
}

/** The complete blocks of an event-stream text (the server writes "\n" lines): events and comments. */
function parseBlocks(text: string): { events: WireEvent[]; comments: string[]; rest: string } {
  const blocks = text.split("\n\n");
  const rest = blocks.pop()!;
  const events: WireEvent[] = [];
  const comments: string[] = [];
  for (const block of blocks) {
    const event: WireEvent = {};
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) comments.push(line);
      else {
        const [, field, value] = /^([a-z]+): (.*)$/.exec(line)!;
        if (field === "data") event.data = JSON.parse(value!);
        else (event as Record<string, string>)[field!] = value!;
      }
    }
    if (Object.keys(event).length > 0) events.push(event);
  }
  return { events, comments, rest };
}

/** Reads a response's events as they come; a wait longer than `timeoutMs` fails the test. */
function sseReader(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let eof = false;
  const queue: WireEvent[] = [];
  const comments: string[] = [];

  async function fill(deadline: number) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("the stream did not get there in time")), deadline - Date.now());
    });
    try {
      const { done, value } = await Promise.race([reader.read(), timeout]);
      if (done) eof = true;
      else buffer += decoder.decode(value, { stream: true });
    } finally {
      clearTimeout(timer);
    }
    const parsed = parseBlocks(buffer);
    buffer = parsed.rest;
    queue.push(...parsed.events);
    comments.push(...parsed.comments);
  }

  return {
    comments,
    /** The next event, or null at the end of the body. */
    async next(timeoutMs = 5000): Promise<WireEvent | null> {
      const deadline = Date.now() + timeoutMs;
      while (queue.length === 0 && !eof) await fill(deadline);
      return queue.shift() ?? null;
    },
    /** Every event up to the end of the body. */
    async rest(timeoutMs = 5000): Promise<WireEvent[]> {
      const deadline = Date.now() + timeoutMs;
      while (!eof) await fill(deadline);
      expect(buffer).toBe(""); // nothing after the last blank line
      return queue.splice(0);
    },
    cancel: () => reader.cancel(),
  };
}

const chunkSeqs = (events: WireEvent[]) => events.filter((e) => e.event === "chunk").map((e) => e.data.seq);

describe("GET /api/durable/runs/{id}/stream: refusals", () => {
  it("answers the same 404 for an unknown run and for a missing or wrong token, and reads nothing", async () => {
    await completedTalk("auth-1", { words: ["a"] });
    const read = vi.spyOn(fx.durable, "readStream");
    try {
      const notFound = { error: { code: "run_not_found", message: 'run "auth-1" not found' } };
      for (const headers of [
        {},
        bearer("nope"),
        bearer(fx.durable.statusToken("auth-2")), // another run's token
        bearer("test-cron-secret"),
        { authorization: `Bearer  ${fx.durable.statusToken("auth-1")}` }, // two spaces
        { authorization: fx.durable.statusToken("auth-1") }, // no scheme
      ]) {
        expect(await expectRefused(fx, () => streamOf("auth-1", headers), 404)).toEqual(notFound);
      }
      // A bad `from` does not tell a caller without the token anything either: auth comes first.
      expect(await expectRefused(fx, () => streamOf("auth-1", bearer("nope"), "?from=x"), 404)).toEqual(notFound);
      expect(read).not.toHaveBeenCalled();
      // Unknown, with the admin secret or with the token such a run would have: the same answer.
      for (const headers of [admin, tokenOf("no-such-run")]) {
        expect(await expectRefused(fx, () => streamOf("no-such-run", headers), 404)).toEqual({
          error: { code: "run_not_found", message: 'run "no-such-run" not found' },
        });
      }
      await expectRefused(fx, () => streamOf("bad\u0000id", admin), 404, "run_not_found");
    } finally {
      read.mockRestore();
    }
  });

  it("answers 200 with the status token and with the admin secret", async () => {
    await completedTalk("auth-3", { words: ["a", "b"] });
    for (const headers of [tokenOf("auth-3"), admin]) {
      const response = await streamOf("auth-3", headers);
      expect(response.status).toBe(200);
      expect(chunkSeqs(await sseReader(response).rest())).toEqual([1, 2]);
    }
  });

  it("refuses a `from` or Last-Event-ID that is not a whole number with 400, and changes nothing", async () => {
    await completedTalk("from-1", { words: ["a", "b", "c"] });
    const read = vi.spyOn(fx.durable, "readStream");
    try {
      for (const from of ["-1", "1.5", "abc", "", "1e3", "0x10", " 1", "99999999999999999", "９"]) {
        const body = await expectRefused(
          fx,
          () => streamOf("from-1", tokenOf("from-1"), `?from=${encodeURIComponent(from)}`),
          400,
          "invalid_resume_point",
        );
        expect(body.error.message).toBe("from must be a whole number >= 0 (a seq)");
      }
      for (const last of ["-1", "x", "2.0"]) {
        const body = await expectRefused(
          fx,
          () => streamOf("from-1", { ...tokenOf("from-1"), "last-event-id": last }, "?from=1"),
          400,
          "invalid_resume_point",
        );
        expect(body.error.message).toBe("Last-Event-ID must be a whole number >= 0 (a seq)");
      }
      expect(read).not.toHaveBeenCalled();
    } finally {
      read.mockRestore();
    }
  });

  it("answers GET only (405 with allow: GET)", async () => {
    const response = await fx.routes.stream.POST(
      new Request(url("/runs/from-1/stream"), { method: "POST", headers: admin }),
      params("from-1"),
    );
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET");
    expect((await response.json()).error.code).toBe("method_not_allowed");
  });
});

describe("GET /api/durable/runs/{id}/stream: a finished run", () => {
  it("replays every chunk as id/event/data, then `end` with the status, and closes", async () => {
    const said = words(30);
    await completedTalk("done-1", { words: said });
    const before = await fingerprint(fx.db);
    const response = await streamOf("done-1", tokenOf("done-1"));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-accel-buffering")).toBe("no");
    const text = await response.text();
    expect(text.startsWith(": open\n\n")).toBe(true);
    expect(text).toContain(
      'id: 1\nevent: chunk\ndata: {"seq":1,"stepId":"say","attempt":1,"data":"w0","broken":false}\n\n',
    );
    expect(text.endsWith('\n\nevent: end\ndata: {"status":"completed"}\n\n')).toBe(true);
    const { events, rest } = parseBlocks(text);
    expect(rest).toBe("");
    expect(events.map((e) => e.id ?? e.event)).toEqual([...said.map((_, i) => String(i + 1)), "end"]);
    expect(events.slice(0, -1).map((e) => e.data.data)).toEqual(said);
    expect(await fingerprint(fx.db)).toEqual(before); // a read writes nothing
  });

  it("starts after `?from=` or Last-Event-ID (which wins), and pages through more than one read", async () => {
    const said = words(23);
    await completedTalk("done-2", { words: said });
    const routes = fx.routesWith({ stream: { batch: 5 } });
    const read = vi.spyOn(fx.durable, "readStream");
    try {
      const all = await sseReader(await streamOf("done-2", tokenOf("done-2"), "", routes)).rest();
      expect(chunkSeqs(all)).toEqual(said.map((_, i) => i + 1));
      expect(all.at(-1)).toEqual({ event: "end", data: { status: "completed" } });
      // 23 chunks, 5 a read: reads after 0, 5, 10, 15, 20 (the short one, with the terminal status).
      expect(read.mock.calls.map(([, options]) => options)).toEqual(
        [0, 5, 10, 15, 20].map((after) => ({ after, limit: 5 })),
      );

      const fromQuery = await sseReader(await streamOf("done-2", tokenOf("done-2"), "?from=20", routes)).rest();
      expect(chunkSeqs(fromQuery)).toEqual([21, 22, 23]);
      const headerWins = await sseReader(
        await streamOf("done-2", { ...tokenOf("done-2"), "last-event-id": "21" }, "?from=3", routes),
      ).rest();
      expect(chunkSeqs(headerWins)).toEqual([22, 23]);
      // Past the last chunk: only the end.
      const past = await sseReader(await streamOf("done-2", tokenOf("done-2"), "?from=999", routes)).rest();
      expect(past).toEqual([{ event: "end", data: { status: "completed" } }]);
    } finally {
      read.mockRestore();
    }
  });

  it("flags the chunks of attempts that did not complete as broken", async () => {
    await completedTalk("broken-1", { words: ["a", "b"], failFirst: true });
    expect((await fx.durable.status("broken-1"))?.status).toBe("completed");
    const retried = await sseReader(await streamOf("broken-1", tokenOf("broken-1"))).rest();
    expect(
      retried.map((e) => (e.event === "chunk" ? [e.data.seq, e.data.attempt, e.data.data, e.data.broken] : e)),
    ).toEqual([
      [1, 1, "a", true],
      [2, 1, "b", true],
      [3, 2, "a", false],
      [4, 2, "b", false],
      { event: "end", data: { status: "completed" } },
    ]);

    await completedTalk("broken-2", { words: ["x"], failAlways: true });
    const failed = await sseReader(await streamOf("broken-2", tokenOf("broken-2"))).rest();
    expect(failed).toEqual([
      { id: "1", event: "chunk", data: { seq: 1, stepId: "say", attempt: 1, data: "x", broken: true } },
      { event: "end", data: { status: "failed" } },
    ]);
  });

  it("ends a cancelled run's stream too", async () => {
    await fx.durable.start(approval, { docId: "d" }, { id: "cancelled-1" });
    await fx.durable.cancel("cancelled-1", "no");
    const events = await sseReader(await streamOf("cancelled-1", tokenOf("cancelled-1"))).rest();
    expect(events).toEqual([{ event: "end", data: { status: "cancelled" } }]);
  });
});

describe("GET /api/durable/runs/{id}/stream: a live run", () => {
  // How soon a chunk is seen is a figure for a benchmark, not a timed assertion here: the test shows
  // each one reaches the reader while the step that wrote it is still held at that word.
  it("shows each chunk while the run runs, before the step may write the next, then `end`", async () => {
    const said = words(6);
    const { id } = await fx.durable.start(talker, { words: said }, { id: "live-1" });
    allowance.set(id, 0);
    // The reader starts before the step streams anything.
    const reader = sseReader(await streamOf(id, tokenOf(id)));
    const advancing = fx.durable.advance(id);
    for (let i = 0; i < said.length; i++) {
      allowance.set(id, i + 1);
      const event = await reader.next();
      expect(event).toEqual({
        id: String(i + 1),
        event: "chunk",
        data: { seq: i + 1, stepId: "say", attempt: 1, data: said[i], broken: false },
      });
      // Seen while the run runs: the step cannot have finished before the next word is allowed.
      if (i < said.length - 1) expect((await fx.durable.status(id))?.status).toBe("running");
    }
    expect(await advancing).toBe("completed");
    expect(await reader.next()).toEqual({ event: "end", data: { status: "completed" } });
    expect(await reader.next()).toBeNull();
  });

  it("a reader dropped mid-stream (mid-event too) resumes by Last-Event-ID: no chunk missed, none twice", async () => {
    const said = words(60);
    const { id } = await fx.durable.start(talker, { words: said, pauseMs: 8 }, { id: "resume-1" });
    let runDone = false;
    const advancing = fx.durable.advance(id).then((outcome) => {
      runDone = true;
      return outcome;
    });
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const seen: WireEvent[] = [];
    let last: string | null = null;
    let connections = 0;
    let whileRunning = 0;
    let cutMidEvent = 0;
    for (let ended = false; !ended; ) {
      expect(connections++).toBeLessThan(500);
      if (!runDone) whileRunning++;
      const response = await streamOf(id, { ...tokenOf(id), ...(last === null ? {} : { "last-event-id": last }) });
      expect(response.status).toBe(200);
      // Take the body up to a random byte, as if the connection broke there, and drop the rest.
      const cut = 10 + Math.floor(random() * 300);
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      while (text.length < cut) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      await reader.cancel();
      const { events, rest } = parseBlocks(text.slice(0, cut));
      if (rest !== "" && !rest.startsWith(":")) cutMidEvent++;
      for (const event of events) {
        if (event.event === "end") ended = true;
        else {
          seen.push(event);
          last = event.id!;
        }
      }
    }
    expect(await advancing).toBe("completed");
    // Exactly 1..N, in order, each once, with its own data.
    expect(seen.map((e) => e.data.seq)).toEqual(said.map((_, i) => i + 1));
    expect(seen.map((e) => e.data.data)).toEqual(said);
    expect(seen.every((e) => e.id === String(e.data.seq))).toBe(true);
    // The test did what it says: many drops, some mid-event, several while the run was running.
    expect(connections).toBeGreaterThan(10);
    expect(cutMidEvent).toBeGreaterThan(3);
    expect(whileRunning).toBeGreaterThan(2);
  });

  it("ends without `end` when the budget runs out, and a reconnect with Last-Event-ID continues", async () => {
    const said = words(8);
    const { id } = await fx.durable.start(talker, { words: said }, { id: "budget-1" });
    allowance.set(id, 3);
    const advancing = fx.durable.advance(id);
    await until(() => committedAt.has(`${id}:3`));
    // maxDuration 1 s less a 600 ms margin: the response stops about 400 ms in.
    const routes = fx.routesWith({ maxDuration: 1, budgetMarginMs: 600 });
    const startedAt = Date.now();
    const first = await sseReader(await streamOf(id, tokenOf(id), "", routes)).rest();
    const took = Date.now() - startedAt;
    expect(first.map((e) => e.event)).toEqual(["chunk", "chunk", "chunk"]); // no `end`
    expect(took).toBeGreaterThanOrEqual(350);
    expect(took).toBeLessThan(1500);
    expect((await fx.durable.status(id))?.status).toBe("running");

    // The platform's deadline counts when there is one (as on Vercel): 5.6 s away less 5 s.
    const onVercel = fx.routesWith({ getDeadline: () => new Date(Date.now() + 5600) });
    const second = sseReader(await streamOf(id, { ...tokenOf(id), "last-event-id": "3" }, "", onVercel));
    allowance.set(id, 5);
    expect((await second.rest()).map((e) => e.id ?? e.event)).toEqual(["4", "5"]);

    allowance.delete(id);
    expect(await advancing).toBe("completed");
    const third = await sseReader(await streamOf(id, { ...tokenOf(id), "last-event-id": "5" }, "", routes)).rest();
    expect(third.map((e) => e.id ?? e.event)).toEqual(["6", "7", "8", "end"]);
    expect(third.at(-1)).toEqual({ event: "end", data: { status: "completed" } });
    expect(third.map((e) => e.data.data).slice(0, 3)).toEqual(said.slice(5));
  });

  it("sends `: ping` while nothing happens, and stops polling when the client goes away", async () => {
    await fx.durable.start(approval, { docId: "d" }, { id: "quiet-1" });
    const routes = fx.routesWith({ stream: { pingMs: 60 } });
    const read = vi.spyOn(fx.durable, "readStream");
    try {
      // The stream's cancel(): what a closed connection does to the response body.
      const reader = sseReader(await streamOf("quiet-1", tokenOf("quiet-1"), "", routes));
      const pending = reader.next(10_000); // reads (and collects comments) while we wait
      // Three pings, however slowly a loaded machine runs the 60 ms timer.
      await until(() => reader.comments.filter((c) => c === ": ping").length >= 3, 10_000);
      expect(reader.comments[0]).toBe(": open");
      await reader.cancel();
      await pending.catch(() => null);
      const reads = read.mock.calls.length;
      expect(reads).toBeGreaterThan(2); // it was polling
      await sleep(300);
      expect(read.mock.calls.length).toBe(reads);

      // The request's signal: the body ends (no `end`) and the polling stops.
      const abort = new AbortController();
      const response = await streamOf("quiet-1", tokenOf("quiet-1"), "", routes, abort.signal);
      const second = sseReader(response);
      await sleep(250);
      abort.abort();
      expect(await second.rest(1000)).toEqual([]);
      const after = read.mock.calls.length;
      await sleep(300);
      expect(read.mock.calls.length).toBe(after);
    } finally {
      read.mockRestore();
    }
  });
});

describe("with encryption at rest (docs/guide/encryption.md)", () => {
  const key = (id: string) => ({ id, secret: Buffer.alloc(32, id).toString("base64") });

  it("answers the chunks plain while the table holds envelopes; without the key, 500 decryption_failed", async () => {
    const db = await connect("memory://");
    const options = { db, workflows: [talker], secrets: { durable: "enc-secret" }, log: () => {} };
    const sealing = createDurable({ ...options, encryption: { keys: [key("k1")] } });
    const lacking = createDurable({ ...options, encryption: { keys: [key("k2")] } });
    try {
      await sealing.migrate();
      await sealing.start(talker, { words: ["sealed", "words"] }, { id: "enc-1" });
      expect(await sealing.advance("enc-1")).toBe("completed");
      const { rows } = await sql<{ data: string }>`select data from durable_stream_chunks order by seq`.execute(db);
      expect(rows.map((row) => row.data.slice(0, 10))).toEqual(["$denc1.k1.", "$denc1.k1."]);

      const headers = { authorization: "Bearer enc-secret" };
      const request = () => new Request(url("/runs/enc-1/stream"), { headers });
      const routes = createDurableRoutes(async () => sealing, { secrets: { durable: "enc-secret" }, log: () => {} });
      const events = await sseReader(await routes.stream.GET(request(), params("enc-1"))).rest();
      expect(events.filter((e) => e.event === "chunk").map((e) => e.data.data)).toEqual(["sealed", "words"]);
      expect(events.at(-1)).toMatchObject({ event: "end", data: { status: "completed" } });

      const refused = createDurableRoutes(async () => lacking, { secrets: { durable: "enc-secret" }, log: () => {} });
      const response = await refused.stream.GET(request(), params("enc-1"));
      expect(response.status).toBe(500);
      const { error } = await response.json();
      expect(error.code).toBe("decryption_failed");
      expect(error.message).toContain("k1");
    } finally {
      await sealing.close();
      await lacking.close();
    }
  });
});
