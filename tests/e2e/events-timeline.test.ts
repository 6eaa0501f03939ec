// The run's events on the run page's timeline, in headless Chromium, under `next start` on the real
// PostgreSQL server (a throwaway database the test process opens too).
//
// How the heal is forced, deterministically: the test process starts a `hello` run without advancing
// it, then claims it itself through the engine's own claim statement (`claimDueRun`) with a 10-minute
// lease and never writes again: an owner that died holding the run. Nothing else advances it (no cron
// under `next start`), and no status read heals it while the lease lasts. The page is opened on the
// running run; then the database clock (`durable.testing.advanceClock`, what every lease test moves)
// goes 11 minutes forward, so the lease has run out. The page's next poll of the status route heals
// the run (a `heal` event, `by: "read"`) and the route advances it to completion; the page re-renders
// and shows the heal on the timeline, without a reload. Then the same page with JavaScript off at
// 390 px (the event is in the server's HTML, nothing scrolls sideways), and a cancel from the run
// page's own button, which shows as a "Cancelled" event.
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import type { Kysely } from "kysely";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hello } from "@/app/workflows/hello";
import { createDurable, type Durable } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { claimDueRun } from "@/lib/durable/store";
import { createTestDatabase } from "../helpers/databases";
import { CHROMIUM, CHROMIUM_FLAGS, PHONE, WIDE, watchProblems } from "./helpers/chromium";
import { signInCookie } from "./helpers/dashboard-session";
import { makeSecrets } from "./helpers/durable-client";
import { layoutProblems } from "./helpers/layout";
import { buildApp, REPO_ROOT, startNext, type NextServer } from "./helpers/next-server";

// Screenshots to look at (git ignores test-artifacts/).
const SCREENSHOTS = path.join(REPO_ROOT, "test-artifacts", "screenshots");

async function shoot(page: Page, file: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, file), fullPage: true, animations: "disabled" });
}

/** The timeline's entries in page order: "event:<kind>" or "step:<id>". */
const timelineOrder = (page: Page) =>
  page
    .locator('[data-testid="timeline"] > li[data-event-kind], [data-testid="timeline"] > li[data-step]')
    .evaluateAll((items) =>
      items.map((li) =>
        li.hasAttribute("data-event-kind")
          ? `event:${li.getAttribute("data-event-kind")}`
          : `step:${li.getAttribute("data-step")}`,
      ),
    );

describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)("events on the run timeline, in Chromium", () => {
  const secrets = makeSecrets();
  let browser: Browser;
  let server: NextServer;
  let db: Kysely<any>;
  let durable: Durable;
  let healedRun: string;

  /** A hello run the test holds as a dead owner: running, under a 10-minute lease nobody renews. */
  async function heldRun(id: string) {
    await durable.start(hello, { name: "events" }, { id });
    const claim = await claimDueRun(db, { workflows: ["hello"], runId: id, leaseMs: 10 * 60_000 });
    expect(claim?.run.status).toBe("running");
    return claim!;
  }

  beforeAll(async () => {
    const url = await createTestDatabase("durable_e2e_events");
    await buildApp();
    server = await startNext({
      env: { DATABASE_URL: url, DURABLE_DRIVER: undefined, DURABLE_DASHBOARD: "on", ...secrets.env },
    });
    db = await connect(url);
    // The test's own instance on the same database: it starts runs without advancing them.
    durable = createDurable({ db, workflows: [hello] });
    await durable.migrate();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await durable?.close();
    await db?.destroy();
    await server?.stop();
  });

  it("shows a heal on the timeline of the open page, without a reload, once the lease ran out", async () => {
    const runId = `hello-heal-${Date.now().toString(36)}`;
    healedRun = runId;
    const dead = await heldRun(runId);
    const page = await browser.newPage({ viewport: WIDE });
    // In production the dashboard asks for a sign-in (docs/guide/dashboard.md, "Who may operate it").
    await signInCookie(page.context(), server.url, secrets.env.DURABLE_SECRET);
    const problems = watchProblems(page);
    try {
      await page.goto(`${server.url}/runs/${encodeURIComponent(runId)}`);
      await page.locator('[data-testid="live-state"]', { hasText: "Live · polling" }).waitFor({ timeout: 30_000 });
      // Under the live lease, reads do not heal: a poll comes and goes, the run stays running, no event.
      await page.waitForResponse((r) => new URL(r.url()).pathname.endsWith(`/runs/${runId}`), { timeout: 15_000 });
      expect(await page.locator(".run-page").getAttribute("data-run-status")).toBe("running");
      expect(await page.locator("[data-event-kind]").count()).toBe(0);
      expect(await durable.events(runId)).toEqual([]);

      // A mark on this document: a reload would lose it.
      await page.evaluate(() => Object.assign(window, { __sameDocument: true }));
      await durable.testing.advanceClock("11m");

      const heal = page.locator('[data-testid="timeline"] [data-event-kind="heal"]');
      await heal.waitFor({ timeout: 30_000 });
      const text = await heal.innerText();
      expect(text).toContain("Healed");
      expect(text).toContain("a status read gave it back");
      // The time the lease ran out (UTC), the event's own time, and the fence the heal moved to.
      expect(text).toContain(`ran out at ${dead.run.leaseUntil!.toISOString().slice(11, 19)} UTC`);
      expect(text).toContain(`fence ${dead.run.fence + 1}`);
      expect(text).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);

      // The status route advanced the healed run: it completes, and the heal stands before its steps.
      await page.locator('.run-page[data-run-status="completed"]').waitFor({ timeout: 30_000 });
      expect(await timelineOrder(page)).toEqual(["event:heal", "step:started-at", "step:compose", "step:count"]);
      expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);

      // What the page shows is what durable.events answers.
      const events = await durable.events(runId);
      expect(events).toMatchObject([{ kind: "heal", stepId: null, fence: dead.run.fence + 1, data: { by: "read" } }]);
      expect(await heal.getAttribute("data-event-id")).toBe(String(events[0]!.id));
      expect(await layoutProblems(page)).toEqual([]);
      await shoot(page, "run-events-heal-1280.png");
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);

  it("has the event in the server's page: with JavaScript off, at 390 px, nothing sticks out", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: PHONE });
    await signInCookie(context, server.url, secrets.env.DURABLE_SECRET);
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/runs/${encodeURIComponent(healedRun)}`);
      expect(await page.locator('[data-testid="live-state"]').innerText()).toBe("Finished");
      const heal = page.locator('[data-testid="timeline"] [data-event-kind="heal"]');
      expect(await heal.isVisible()).toBe(true);
      expect(await heal.innerText()).toContain("Healed");
      expect(await timelineOrder(page)).toEqual(["event:heal", "step:started-at", "step:compose", "step:count"]);
      expect(await layoutProblems(page)).toEqual([]);
      await shoot(page, "run-events-heal-390.png");
    } finally {
      await context.close();
    }
  }, 60_000);

  it("shows a cancel from the run page's button as an event, live", async () => {
    const runId = `hello-cancel-${Date.now().toString(36)}`;
    await heldRun(runId);
    const page = await browser.newPage({ viewport: PHONE });
    await signInCookie(page.context(), server.url, secrets.env.DURABLE_SECRET);
    const problems = watchProblems(page);
    page.on("dialog", (dialog) => void dialog.accept());
    try {
      await page.goto(`${server.url}/runs/${encodeURIComponent(runId)}`);
      await page.locator('[data-testid="live-state"]', { hasText: "Live · polling" }).waitFor({ timeout: 30_000 });
      await page.getByRole("button", { name: "Cancel run" }).click();
      const cancel = page.locator('[data-testid="timeline"] [data-event-kind="cancel"]');
      await cancel.waitFor({ timeout: 30_000 });
      expect(await cancel.innerText()).toContain("Cancelled");
      expect(await cancel.innerText()).toContain("cancelled from the dashboard (it was running)");
      await page.locator('.run-page[data-run-status="cancelled"]').waitFor();
      expect(await durable.events(runId)).toMatchObject([
        { kind: "cancel", data: { reason: "cancelled from the dashboard", from: "running" } },
      ]);
      expect(await layoutProblems(page)).toEqual([]);
      await shoot(page, "run-events-cancel-390.png");
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 90_000);
});
