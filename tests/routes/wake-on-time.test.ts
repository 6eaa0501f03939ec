// Sleeps wake on time with nothing but the routes: the local cron of `next dev` and the status hook's
// poller (`RunPoller`, what `useDurableRun` runs in the page) are each driven against the real
// route handlers (their fetch calls the exported GET), on an in-memory instance with the real
// clock. Each one learns the wake time (the tick report's `nextWakeInMs`, the status's `wakeAt`)
// and calls at that time, not at its next interval or backoff step. What is measured is the run's
// own stored times: the sleep step began when the run parked and ended at the claim that woke it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable, type RunStatus } from "@/lib/durable";
import { runDevCron } from "@/lib/durable/http/dev-cron";
import { createDurableRoutes, type DurableRoutes } from "@/lib/durable/next";
import { RunPoller } from "@/lib/durable/react";
import { type TickReport, tickReportSchema } from "@/lib/durable/schemas";
import { until } from "../helpers/until";
import { params, SECRETS } from "./harness";

const SLEEP_MS = 2500;

const nap = defineWorkflow({
  name: "nap",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.sleep("nap", SLEEP_MS);
    return { woke: true };
  },
});

let durable: Durable;
let routes: DurableRoutes;
beforeAll(async () => {
  // No sleep is waited in process: every one parks its run, as a sleep longer than 5 s does.
  durable = createDurable({
    db: await connect("memory://"),
    workflows: [nap],
    secrets: SECRETS,
    log: () => {},
    defaults: { inProcessWait: "0ms" },
  });
  await durable.migrate();
  routes = createDurableRoutes(async () => durable, { secrets: SECRETS, log: () => {} });
});
afterAll(() => durable.close());

/** How late the run's sleep ended, by its stored times (ms after its wake time). */
function lateness(run: RunStatus): number {
  const sleep = run.steps.find((s) => s.id === "nap")!;
  return Date.parse(sleep.completedAt!) - (Date.parse(sleep.startedAt!) + SLEEP_MS);
}

describe("sleeps wake on time", () => {
  it("the local cron calls the tick route at the wake time the last tick reported", async () => {
    const reports: TickReport[] = [];
    const stop = runDevCron({
      intervalMs: 5000,
      secret: SECRETS.cron,
      log: () => {},
      fetch: (async (url: string | URL | Request, init?: RequestInit) => {
        const response = await routes.tick.GET(new Request(url, init));
        const text = await response.text();
        reports.push(tickReportSchema.parse(JSON.parse(text)));
        return new Response(text, { status: response.status });
      }) as typeof fetch,
    });
    try {
      await durable.start(nap, {}, { id: "cron-nap" });
      // The cron's first call (after its interval) claims the run, which parks on its sleep: the
      // report says when it wakes, by the database clock.
      await until(() => reports.length >= 1, 30_000);
      const parked = (await durable.status("cron-nap"))!;
      expect(parked.status).toBe("waiting");
      expect(reports[0]).toMatchObject({ claimed: 1, waiting: 1, nextWakeAt: parked.wakeAt });
      expect(reports[0]!.nextWakeInMs).toBeGreaterThan(0);
      expect(reports[0]!.nextWakeInMs).toBeLessThanOrEqual(SLEEP_MS);

      await until(async () => (await durable.status("cron-nap"))!.status === "completed", 30_000);
      const late = lateness((await durable.status("cron-nap"))!);
      // Calling every 5 s, it would have woken 2.5 s late.
      expect(late).toBeGreaterThanOrEqual(0);
      expect(late).toBeLessThan(1000);
      // The second call woke it; nothing else waits on time, and the report says so.
      expect(reports[1]).toMatchObject({ claimed: 1, completed: 1, nextWakeAt: null, nextWakeInMs: null });
    } finally {
      stop();
    }
  });

  it("the status hook's poller reads the run at its wake time, and the read advances it (no cron)", async () => {
    const { id } = await durable.start(nap, {}, { id: "page-nap" });
    const seen: { at: number; status: string }[] = [];
    const polls: number[] = [];
    const poller = new RunPoller(
      id,
      {
        token: durable.statusToken(id),
        endpoint: "http://localhost/api/durable/runs",
        isHidden: () => false,
        fetch: (async (url: string | URL | Request, init?: RequestInit) => {
          polls.push(Date.now());
          return routes.run.GET(new Request(url, init), params(id));
        }) as typeof fetch,
      },
      (state) => {
        if (state.run) seen.push({ at: Date.now(), status: state.run.status });
      },
    );
    poller.start();
    try {
      await until(() => seen.some((s) => s.status === "completed"), 30_000);
    } finally {
      poller.stop();
    }
    const done = (await durable.status(id))!;
    const sleep = done.steps.find((s) => s.id === "nap")!;
    const wake = Date.parse(sleep.startedAt!) + SLEEP_MS;
    // The read at the wake time advanced it: backing off 1 s, 2 s, 4 s, the poller would have read
    // it about 1.5 s late, and seen it done 4 s after that.
    expect(lateness(done)).toBeGreaterThanOrEqual(0);
    expect(lateness(done)).toBeLessThan(1000);
    const shown = seen.find((s) => s.status === "completed")!.at;
    expect(shown - wake).toBeLessThan(1500);
    console.log(
      `[wake on time] poller: the sleep ended ${lateness(done)} ms after its wake time, ` +
        `seen completed ${shown - wake} ms after it, in ${polls.length} polls`,
    );
  });
});
