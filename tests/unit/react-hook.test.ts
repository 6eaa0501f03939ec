// The status-polling hook of lib/durable/react.ts. Its loop (RunPoller) is driven here with a fake
// fetch and fake timers: backoff, reset on change, stop when terminal, errors, hidden tabs. The
// hook itself is rendered with react-dom/server (effects do not run there: it must render its
// initial state without fetching or touching `document`); tests/e2e/dashboard.test.ts watches it
// update a real page in Chromium.
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RunStatus } from "@/lib/durable";
import { isTerminal, RunPoller, useDurableRun, type RunPollState } from "@/lib/durable/react";

function runStatus(overrides: Partial<RunStatus> = {}): RunStatus {
  return {
    id: "run/1",
    workflow: "approval",
    version: null,
    status: "waiting",
    createdAt: "2025-01-01T00:00:00.000Z",
    updatedAt: "2025-01-01T00:00:01.000Z",
    wakeAt: null,
    waitingFor: { kind: "signal", name: "decision" },
    output: null,
    error: null,
    attempts: 1,
    warnings: [],
    steps: [],
    ...overrides,
  };
}

type Answer = RunStatus | { http: number; body?: unknown } | Error;

/** A fetch that answers from a script (the last answer repeats) and records when it was called. */
function fakeFetch(...answers: Answer[]) {
  const calls: { at: number; url: string; init: RequestInit }[] = [];
  const fn = vi.fn(async (url: string | URL | Request, init?: RequestInit) => {
    calls.push({ at: Date.now(), url: String(url), init: init ?? {} });
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)]!;
    if (answer instanceof Error) throw answer;
    const [http, body] = "http" in answer ? [answer.http, answer.body ?? null] : [200, answer];
    return new Response(JSON.stringify(body), { status: http, headers: { "content-type": "application/json" } });
  });
  return { fetch: fn as unknown as typeof fetch, calls, gaps: () => calls.slice(1).map((c, i) => c.at - calls[i]!.at) };
}

let t0 = 0;
beforeEach(() => {
  vi.useFakeTimers();
  t0 = Date.now();
});
afterEach(() => {
  vi.useRealTimers();
});

function poller(fetch: typeof globalThis.fetch, extra: Partial<ConstructorParameters<typeof RunPoller>[1]> = {}) {
  const states: RunPollState[] = [];
  const p = new RunPoller("run/1", { token: "tok-1", fetch, isHidden: () => false, ...extra }, (s) => states.push(s));
  return { p, states };
}

describe("RunPoller", () => {
  it("polls at once, then backs off 1 s → 2 s → 4 s → 5 s (cap) while nothing changes", async () => {
    const f = fakeFetch(runStatus());
    const { p } = poller(f.fetch);
    p.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(f.calls).toHaveLength(1);
    expect(f.calls[0]!.at).toBe(t0);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(f.gaps().slice(0, 7)).toEqual([1000, 2000, 4000, 5000, 5000, 5000, 5000]);
    p.stop();
  });

  it("goes back to 1 s when the run changes", async () => {
    const waiting = runStatus();
    const moved = runStatus({ status: "running", waitingFor: null, updatedAt: "2025-01-01T00:00:09.000Z" });
    const f = fakeFetch(waiting, waiting, waiting, waiting, moved);
    const { p } = poller(f.fetch);
    p.start();
    await vi.advanceTimersByTimeAsync(20_000);
    // Polls 1–4 see the same run (1, 2, 4 s apart); poll 5 sees it move: the next comes 1 s later.
    expect(f.gaps().slice(0, 5)).toEqual([1000, 2000, 4000, 5000, 1000]);
    p.stop();
  });

  it("polls just after a run's wake time, not at the next backoff step, then sees it move 250 ms later", async () => {
    // A sleep that ends 8.5 s in. The route advances a due run after answering a read of it: the
    // first read after the wake time wakes it, the one after that sees it done.
    const wakeAt = new Date(t0 + 8500).toISOString();
    let woken: number | null = null;
    const calls: number[] = [];
    const fetch = vi.fn(async () => {
      const now = Date.now();
      calls.push(now - t0);
      const done = woken !== null && now > woken;
      if (!done && woken === null && now >= Date.parse(wakeAt)) woken = now;
      const run = done
        ? runStatus({ status: "completed", waitingFor: null })
        : runStatus({ wakeAt, waitingFor: { kind: "sleep", name: "nap" } });
      return new Response(JSON.stringify(run), { headers: { "content-type": "application/json" } });
    }) as unknown as typeof globalThis.fetch;
    const { p, states } = poller(fetch);
    p.start();
    await vi.advanceTimersByTimeAsync(30_000);
    // 0, 1, 3 s as the backoff goes; then not at 7 + 4 = 11 s: at the wake time (+100 ms), and 250 ms later.
    expect(calls).toEqual([0, 1000, 3000, 7000, 8600, 8850]);
    expect(states.at(-1)!.run!.status).toBe("completed");
  });

  it("backs off again from 250 ms when a run stays past its wake time (held by a concurrency limit)", async () => {
    const f = fakeFetch(runStatus({ wakeAt: new Date(t0 + 500).toISOString(), waitingFor: null, status: "pending" }));
    const { p } = poller(f.fetch);
    p.start();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(f.calls[1]!.at - t0).toBe(600);
    expect(f.gaps().slice(0, 8)).toEqual([600, 250, 500, 1000, 2000, 4000, 5000, 5000]);
    p.stop();
  });

  it("keeps its backoff for a wake time further off than the next step", async () => {
    const f = fakeFetch(runStatus({ wakeAt: new Date(t0 + 10 * 60_000).toISOString() }));
    const { p } = poller(f.fetch);
    p.start();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(f.gaps().slice(0, 6)).toEqual([1000, 2000, 4000, 5000, 5000, 5000]);
    p.stop();
  });

  it("sends the status token as bearer, never caches, and encodes the run id", async () => {
    const f = fakeFetch(runStatus({ status: "completed", waitingFor: null }));
    const { p } = poller(f.fetch, { endpoint: "/base/runs" });
    p.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(f.calls[0]!.url).toBe("/base/runs/run%2F1");
    expect(new Headers(f.calls[0]!.init.headers).get("authorization")).toBe("Bearer tok-1");
    expect(f.calls[0]!.init.cache).toBe("no-store");
  });

  it("stops for good once the run is terminal", async () => {
    for (const status of ["completed", "failed", "cancelled"] as const) {
      const f = fakeFetch(
        runStatus(),
        runStatus({ status: "running", waitingFor: null }),
        runStatus({ status, waitingFor: null }),
      );
      const { p, states } = poller(f.fetch);
      p.start();
      await vi.advanceTimersByTimeAsync(120_000);
      expect(f.calls).toHaveLength(3);
      expect(states.at(-1)).toMatchObject({ run: { status }, error: null, isLoading: false });
    }
  });

  it("with an initial status: shows it at once and polls after 1 s; with a terminal one, never polls", async () => {
    const f = fakeFetch(runStatus());
    const { p } = poller(f.fetch, { initial: runStatus() });
    expect(p.state).toEqual({ run: runStatus(), error: null, isLoading: false });
    p.start();
    await vi.advanceTimersByTimeAsync(999);
    expect(f.calls).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(f.calls).toHaveLength(1);
    p.stop();

    const g = fakeFetch(runStatus());
    const done = poller(g.fetch, { initial: runStatus({ status: "completed", waitingFor: null }) });
    done.p.start();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(g.calls).toHaveLength(0);
  });

  it("reports a 5xx or a network failure, keeps the last run, backs off and recovers", async () => {
    const f = fakeFetch(
      runStatus(),
      { http: 503, body: { error: { code: "secret_missing", message: "DURABLE_SECRET is not set" } } },
      new TypeError("fetch failed"),
      runStatus(),
    );
    const { p, states } = poller(f.fetch);
    p.start();
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(states.at(-1)!.run).toEqual(runStatus());
    expect(states.at(-1)!.error).toMatchObject({
      name: "RunPollError",
      status: 503,
      code: "secret_missing",
      message: "DURABLE_SECRET is not set",
    });
    await vi.advanceTimersByTimeAsync(2000);
    expect(states.at(-1)!.error).toMatchObject({ status: 0, code: "network_error", message: "fetch failed" });
    expect(states.at(-1)!.run).toEqual(runStatus());
    await vi.advanceTimersByTimeAsync(4000);
    expect(f.gaps()).toEqual([1000, 2000, 4000]);
    expect(states.at(-1)).toMatchObject({ error: null, run: runStatus() });
    p.stop();
  });

  it("stops on a 404 (unknown run or wrong token): it will not fix itself", async () => {
    const f = fakeFetch({ http: 404, body: { error: { code: "run_not_found", message: 'run "run/1" not found' } } });
    const { p, states } = poller(f.fetch);
    p.start();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(f.calls).toHaveLength(1);
    expect(states.at(-1)).toMatchObject({ run: null, isLoading: false, error: { status: 404, code: "run_not_found" } });
  });

  it("pauses while the tab is hidden and polls at once when it shows again", async () => {
    let hidden = false;
    const f = fakeFetch(runStatus());
    const { p } = poller(f.fetch, { isHidden: () => hidden });
    p.start();
    await vi.advanceTimersByTimeAsync(0);
    hidden = true;
    await vi.advanceTimersByTimeAsync(120_000);
    expect(f.calls).toHaveLength(1);
    p.visibilityChanged(); // still hidden: nothing
    expect(f.calls).toHaveLength(1);
    hidden = false;
    p.visibilityChanged();
    await vi.advanceTimersByTimeAsync(0);
    expect(f.calls).toHaveLength(2);
    expect(f.calls[1]!.at - t0).toBe(120_000);
    // And the backoff starts over from 1 s.
    await vi.advanceTimersByTimeAsync(2000);
    expect(f.calls).toHaveLength(3);
    p.stop();
  });

  it("drops an answer that arrives after stop(), and polls no more", async () => {
    let release!: (r: Response) => void;
    const slow = vi.fn(
      (_url: string, init: RequestInit) =>
        new Promise<Response>((resolve, reject) => {
          release = resolve;
          init.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
        }),
    );
    const { p, states } = poller(slow as unknown as typeof fetch);
    p.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(slow).toHaveBeenCalledTimes(1);
    p.stop();
    release(new Response(JSON.stringify(runStatus())));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(states).toHaveLength(0);
    expect(slow).toHaveBeenCalledTimes(1);
  });

  it("refresh() polls at once, even a finished run (after a retry it moves again)", async () => {
    const f = fakeFetch(
      runStatus({ status: "failed", waitingFor: null }),
      runStatus({ status: "pending", waitingFor: null }),
      runStatus({ status: "completed", waitingFor: null }),
    );
    const { p, states } = poller(f.fetch);
    p.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(f.calls).toHaveLength(1);
    p.refresh();
    await vi.advanceTimersByTimeAsync(0);
    expect(states.at(-1)!.run!.status).toBe("pending");
    await vi.advanceTimersByTimeAsync(1000);
    expect(states.at(-1)!.run!.status).toBe("completed");
    await vi.advanceTimersByTimeAsync(60_000);
    expect(f.calls).toHaveLength(3);
  });

  it("knows the terminal statuses", () => {
    expect(
      ["completed", "failed", "cancelled"].map((status) => isTerminal(runStatus({ status } as Partial<RunStatus>))),
    ).toEqual([true, true, true]);
    expect(
      ["pending", "running", "waiting"].map((status) => isTerminal(runStatus({ status } as Partial<RunStatus>))),
    ).toEqual([false, false, false]);
    expect(isTerminal(null)).toBe(false);
  });
});

describe("useDurableRun (server render)", () => {
  function Probe(props: { initial?: RunStatus; fetch: typeof fetch }) {
    const { run, error, isLoading, refresh } = useDurableRun("run/1", { token: "tok-1", ...props });
    return createElement(
      "pre",
      null,
      JSON.stringify({
        status: run?.status ?? null,
        error: error?.message ?? null,
        isLoading,
        refresh: typeof refresh,
      }),
    );
  }
  const decode = (html: string) => JSON.parse(html.replace(/^<pre>|<\/pre>$/g, "").replace(/&quot;/g, '"'));

  it("renders the initial status the server read, without fetching", () => {
    const f = fakeFetch(runStatus());
    const html = renderToString(
      createElement(Probe, { initial: runStatus({ status: "running", waitingFor: null }), fetch: f.fetch }),
    );
    expect(decode(html)).toEqual({ status: "running", error: null, isLoading: false, refresh: "function" });
    expect(f.calls).toHaveLength(0);
  });

  it("renders a loading state without one", () => {
    const f = fakeFetch(runStatus());
    const html = renderToString(createElement(Probe, { fetch: f.fetch }));
    expect(decode(html)).toEqual({ status: null, error: null, isLoading: true, refresh: "function" });
    expect(f.calls).toHaveLength(0);
  });
});
