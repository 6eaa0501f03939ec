// The dashboard in headless Chromium against the built app (`next start`, in-memory PGlite, no
// cron): start the approval demo from `/`, approve it on its run page, and watch the timeline reach
// "completed" without reloading, driven by useDurableRun polling the status route with the run's
// status token (never the admin secret). Saves test-artifacts/run-page.png.
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statusTokenFor } from "@/lib/durable/http/status-token";
import { makeSecrets } from "./helpers/durable-client";
import { buildApp, REPO_ROOT, startNext, type NextServer } from "./helpers/next-server";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARTIFACTS = path.join(REPO_ROOT, "test-artifacts");
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

// Skipped only off CI on a machine without Chromium; in CI a missing browser fails the suite.
describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)("dashboard in Chromium", () => {
  const secrets = makeSecrets();
  let server: NextServer;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  /** Every request to the status route: the bearer it carried. */
  const statusPolls: { runId: string; bearer: string | null }[] = [];

  beforeAll(async () => {
    await buildApp();
    server = await startNext({
      env: { DATABASE_URL: "memory://", DURABLE_DRIVER: undefined, DURABLE_DASHBOARD: "on", ...secrets.env },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`console error: ${m.text()}`);
    });
    page.on("request", (request) => {
      const match = /\/api\/durable\/runs\/([^/?]+)$/.exec(new URL(request.url()).pathname);
      if (match)
        statusPolls.push({ runId: decodeURIComponent(match[1]!), bearer: request.headers().authorization ?? null });
    });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("starts the approval demo, approves it on the run page and sees it complete", async () => {
    await page.goto(`${server.url}/`);
    await expect(page.getByRole("heading", { name: "Durable runs" }).isVisible()).resolves.toBe(true);

    // Start: the server action starts the run and opens its page.
    await page.locator('form[data-demo="plan-approval"] button[type="submit"]').click();
    await page.waitForURL(/\/runs\/plan-approval-[0-9a-f]+$/, { timeout: 30_000 });
    const runId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);

    // The plan is drafted and the run parks on its `decision` signal.
    const approve = page.getByRole("button", { name: "Approve" });
    await approve.waitFor({ timeout: 30_000 });
    await page.locator('[data-step="plan"][data-step-status="completed"]').waitFor();
    await page.locator('[data-step="decision"][data-step-status="waiting"]').waitFor();
    expect(await page.locator('[data-testid="waiting"]').innerText()).toContain("decision");
    expect(await page.locator('[data-testid="demo-details"] tbody tr').count()).toBe(3);

    // A mark on this document: a full reload would lose it.
    await page.evaluate(() => Object.assign(window, { __sameDocument: true }));
    const pollsBefore = statusPolls.length;
    await approve.click();

    // The refunds execute one step each, then the run completes; the page follows without a reload.
    await page.locator('.run-page[data-run-status="completed"]').waitFor({ timeout: 60_000 });
    await page.locator('[data-testid="output"]').waitFor();
    expect(await page.locator('[data-step^="refund:"][data-step-status="completed"]').count()).toBe(3);
    expect(await page.locator('[data-testid="progress"]').innerText()).toBe("5 of 5 steps done");
    expect(JSON.parse(await page.locator('[data-testid="output"]').innerText())).toMatchObject({
      status: "executed",
      approvedBy: "dashboard",
    });
    expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
    expect(statusPolls.length).toBeGreaterThan(pollsBefore);

    // The hook polled with this run's status token, and only with it: the admin secret never
    // reached the browser, neither in a request nor in the page.
    const token = statusTokenFor(secrets.env.DURABLE_SECRET, runId);
    expect(statusPolls.filter((p) => p.runId === runId).length).toBeGreaterThan(0);
    for (const poll of statusPolls) expect(poll.bearer).toBe(`Bearer ${token}`);
    expect(await page.content()).not.toContain(secrets.env.DURABLE_SECRET);

    // Once the run is finished, polling stops.
    const settled = statusPolls.length;
    await page.waitForTimeout(6_000);
    expect(statusPolls.length).toBe(settled);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, "run-page.png"), fullPage: true });

    // The list knows it: under "Completed", with its count.
    await page.goto(`${server.url}/?status=completed`);
    await page.getByRole("link", { name: runId }).waitFor();
    expect(await page.locator(".filter-active").innerText()).toMatch(/Completed\s+1/);
    expect(problems).toEqual([]);
  }, 180_000);
});
