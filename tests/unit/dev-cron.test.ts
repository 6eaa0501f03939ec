// The local cron that instrumentation.ts starts under `next dev`: it calls the tick route with the
// cron bearer, once per process, and does nothing outside development. It calls again when the
// tick report says the next run wakes (`nextWakeInMs`), within a floor and its interval: driven
// here with an injected fetch and fake timers. tests/routes/dev-cron-timing.test.ts runs it against
// the real tick route.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_TIMER_MS } from "@/lib/durable/duration";
import { nextCallDelay, runDevCron, type TickTiming } from "@/lib/durable/http/dev-cron";
import { startDevCron } from "@/lib/durable/next";
import { until } from "../helpers/until";

describe("startDevCron", () => {
  const calls: { path: string; bearer: string | undefined }[] = [];
  let answer: () => string = () => JSON.stringify({ claimed: 0, warnings: [] });
  const server = http.createServer((request, response) => {
    calls.push({ path: request.url ?? "", bearer: request.headers.authorization });
    response.setHeader("content-type", "application/json");
    response.end(answer());
  });
  let stop = () => {};

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    vi.stubEnv("__NEXT_PRIVATE_ORIGIN", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  afterEach(() => {
    stop();
    calls.length = 0;
    answer = () => JSON.stringify({ claimed: 0, warnings: [] });
    vi.stubEnv("NODE_ENV", "test");
    vi.stubEnv("DURABLE_DEV_CRON", "");
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await new Promise((resolve) => server.close(resolve));
  });

  it("calls the tick route with the cron bearer every interval under next dev, once per process", async () => {
    vi.stubEnv("NODE_ENV", "development");
    const messages: string[] = [];
    stop = startDevCron({ intervalMs: 30, secret: "cron-bearer", log: (m) => messages.push(m) });
    expect(startDevCron({ intervalMs: 30, secret: "another" })).toBe(stop);

    await until(() => calls.length >= 3);
    expect(calls.every((c) => c.path === "/api/durable/tick" && c.bearer === "Bearer cron-bearer")).toBe(true);
    expect(messages.filter((m) => m.startsWith("calling "))).toHaveLength(1);

    // A report that claimed something is printed; one that claimed nothing is not.
    answer = () => JSON.stringify({ claimed: 2, warnings: [] });
    await until(() => messages.some((m) => m.includes('"claimed":2')));

    stop();
    const after = calls.length;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(calls.length).toBeLessThanOrEqual(after + 1); // at most the call already in flight
  });

  it("says once that the route did not answer with a tick report", async () => {
    vi.stubEnv("NODE_ENV", "development");
    answer = () => "my own tick";
    const messages: string[] = [];
    stop = startDevCron({ intervalMs: 20, secret: "s", log: (m) => messages.push(m) });
    await until(() => calls.length >= 4);
    expect(messages.filter((m) => m.includes("not with a tick report"))).toHaveLength(1);
  });

  it("does nothing outside development, or when DURABLE_DEV_CRON=off", async () => {
    vi.stubEnv("NODE_ENV", "production");
    stop = startDevCron({ intervalMs: 10, secret: "s" });
    vi.stubEnv("NODE_ENV", "development");
    vi.stubEnv("DURABLE_DEV_CRON", "off");
    const off = startDevCron({ intervalMs: 10, secret: "s" });
    await new Promise((resolve) => setTimeout(resolve, 150));
    off();
    expect(calls).toEqual([]);
  });
});

describe("the cron's timing", () => {
  const report = (claimed: number, nextWakeInMs: number | null): TickTiming => ({ claimed, nextWakeInMs });

  it("waits until the next wake, at least the floor and at most the interval", () => {
    expect(nextCallDelay(report(0, 1200), 5000, 50)).toBe(1205);
    expect(nextCallDelay(report(0, 10), 5000, 50)).toBe(50);
    expect(nextCallDelay(report(0, 60_000), 5000, 50)).toBe(5000);
    // Nothing waits on time, the call failed, or an older route says nothing: the interval.
    expect(nextCallDelay(report(3, null), 5000, 50)).toBe(5000);
    expect(nextCallDelay(null, 5000, 50)).toBe(5000);
    // Due now but not taken: held (the interval), unless the tick claimed runs as it ended (soon).
    expect(nextCallDelay(report(0, -10), 5000, 50)).toBe(5000);
    expect(nextCallDelay(report(2, -3), 5000, 50)).toBe(50);
  });

  describe("runDevCron with a fake fetch and fake timers", () => {
    let stop = () => {};
    beforeEach(() => {
      vi.useFakeTimers();
    });
    afterEach(() => {
      stop();
      vi.useRealTimers();
    });

    it("waits an interval past Node's timer limit at the limit, instead of calling at once (rule 19)", async () => {
      const calls: number[] = [];
      const t0 = Date.now();
      const fetch = (async () => {
        calls.push(Date.now() - t0);
        return new Response(JSON.stringify({ ...report(0, null), warnings: [] }));
      }) as typeof globalThis.fetch;
      stop = runDevCron({ intervalMs: MAX_TIMER_MS + 1_000, secret: "s", log: () => {}, fetch });
      await vi.advanceTimersByTimeAsync(60_000);
      expect(calls).toEqual([]);
      await vi.advanceTimersByTimeAsync(MAX_TIMER_MS - 60_000);
      expect(calls).toEqual([MAX_TIMER_MS]);
    });

    it("calls when each report says the next run wakes, and after the interval when none does", async () => {
      const answers: (TickTiming | Error | string)[] = [
        report(0, 1200), // a run wakes in 1.2 s
        report(1, null), // it ran; nothing else waits on time
        report(0, -10), // due, but held: the interval
        report(2, -3), // one came due as the tick ended: soon
        report(0, 10), // wakes in 10 ms: the floor
        report(0, 60_000), // a minute away: the interval
        new Error("ECONNREFUSED"), // the server is restarting: the interval
        "<html>not a report</html>", // not a tick report: the interval
        report(0, 2500),
      ];
      const calls: { at: number; bearer: string | null }[] = [];
      const t0 = Date.now();
      const fetch = (async (_url: string | URL | Request, init?: RequestInit) => {
        calls.push({ at: Date.now() - t0, bearer: new Headers(init?.headers).get("authorization") });
        const answer = answers[calls.length - 1] ?? report(0, null);
        if (answer instanceof Error) throw answer;
        return new Response(typeof answer === "string" ? answer : JSON.stringify({ ...answer, warnings: [] }));
      }) as typeof globalThis.fetch;
      const messages: string[] = [];
      stop = runDevCron({ intervalMs: 5000, minDelayMs: 50, secret: "s", log: (m) => messages.push(m), fetch });

      await vi.advanceTimersByTimeAsync(40_000);
      const gaps = calls.slice(1).map((c, i) => c.at - calls[i]!.at);
      expect(calls[0]!.at).toBe(5000);
      expect(gaps.slice(0, 9)).toEqual([1205, 5000, 5000, 50, 50, 5000, 5000, 5000, 2505]);
      expect(calls.every((c) => c.bearer === "Bearer s")).toBe(true);
      expect(messages.filter((m) => m.startsWith("calling "))).toHaveLength(1);
      expect(messages.filter((m) => m.includes("could not be called yet"))).toHaveLength(1);

      // Stopped: no call comes any more.
      stop();
      const made = calls.length;
      await vi.advanceTimersByTimeAsync(20_000);
      expect(calls).toHaveLength(made);
    });
  });
});
