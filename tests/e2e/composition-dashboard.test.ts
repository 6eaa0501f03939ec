// The "Order of runs" demo on the dashboard, in headless Chromium, on in-memory PGlite.
//
// Under `next dev`, as `npm run dev` runs it (its local cron ticks, so the invoked children run):
// start the order from `/`, see its two children as links with their statuses (on the side and on
// the timeline), open a child and see its parent, see the race's two branches undecided and the
// deadline counting down in the browser, copy the callback URL, approve through the dev-only form
// (a POST of a JSON body to the URL), and watch the run complete with the approval branch marked
// as the winner. The URL is on the operator's page only: the status route, read with the run's
// status token, never carries it. A second POST to it is refused (409).
//
// Under `next start` (NODE_ENV=production, DURABLE_DASHBOARD=on): the URL is shown, the form is
// not; the test, as the third party, POSTs to the URL it read from the page. No cron runs there:
// the test calls the tick route with the cron bearer, as Vercel Cron does every minute.
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statusTokenFor } from "@/lib/durable/auth/status-token";
import { CHROMIUM, CHROMIUM_FLAGS, PHONE, WIDE, watchProblems } from "./helpers/chromium";
import { signInCookie } from "./helpers/dashboard-session";
import { DurableClient, makeSecrets } from "./helpers/durable-client";
import { layoutProblems } from "./helpers/layout";
import { buildApp, REPO_ROOT, startNext, startNextDev, type NextServer } from "./helpers/next-server";

const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.join(REPO_ROOT, "docs", "screenshots")
  : path.join(REPO_ROOT, "test-artifacts", "screenshots");

async function shoot(page: Page, file: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.evaluate(() => document.fonts.ready);
  await page.screenshot({ path: path.join(SCREENSHOTS, file), fullPage: true, animations: "disabled" });
}

/** Clicks the order demo's Start button on `/` and waits for its run page; answers the run id. */
async function startOrder(page: Page, baseUrl: string, timeout: number): Promise<string> {
  await page.goto(`${baseUrl}/`, { timeout });
  await page.locator('form[data-demo="order"] button[type="submit"]').click();
  await page.waitForURL(/\/runs\/order-[0-9a-f]+$/, { timeout });
  return decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
}

/**
 * Waits until the order's page shows it parked on its race, and both children completed: the
 * timeline follows the polled run, the children the server's render, which the page asks for again
 * once the polled run moved.
 */
async function waitForRace(page: Page, runId: string, timeout: number) {
  await page.locator('[data-step="approval"][data-step-status="waiting"]').waitFor({ timeout });
  for (const child of ["payment", "shipping"]) {
    await page
      .locator(`[data-testid="run-children"] li[data-child="${runId}/${child}"][data-child-status="completed"]`)
      .waitFor({ timeout });
  }
}

/** What the page shows of the race: each branch's name and state. */
const branchStates = (page: Page) =>
  page
    .locator('[data-step="approval"] [data-branch]')
    .evaluateAll((items) => items.map((li) => [li.getAttribute("data-branch"), li.getAttribute("data-branch-state")]));

describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)("the order of runs on the dashboard", () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  describe("under next dev, with its local cron", () => {
    const secrets = makeSecrets();
    let server: NextServer;
    let base: string;
    let context: BrowserContext;

    beforeAll(async () => {
      server = await startNextDev({
        env: {
          DATABASE_URL: "memory://",
          DURABLE_DRIVER: undefined,
          DURABLE_DASHBOARD: "on",
          DURABLE_BASE_URL: undefined,
          VERCEL_URL: undefined,
          ...secrets.env,
        },
      });
      base = `http://127.0.0.1:${server.port}`;
      context = await browser.newContext({ viewport: WIDE });
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    }, 120_000);

    afterAll(async () => {
      await context?.close();
      await server?.stop();
    });

    it("shows the children, the race and the deadline; the dev form approves it and the winner shows", async () => {
      const page = await context.newPage();
      const problems = watchProblems(page);
      const client = new DurableClient(base, secrets.env.DURABLE_SECRET, secrets.signalKey);
      // The first request of each page compiles it: minutes, at worst, on two cores.
      const runId = await startOrder(page, base, 240_000);
      const token = statusTokenFor(secrets.env.DURABLE_SECRET, runId);
      await page.getByText("Live · polling").waitFor({ timeout: 120_000 });
      await waitForRace(page, runId, 120_000);

      // The children: links with their statuses, on the side and on the timeline's invoke steps.
      const children = page.locator('[data-testid="run-children"] li');
      expect(await children.count()).toBe(2);
      expect(await children.evaluateAll((lis) => lis.map((li) => li.getAttribute("data-child-status")))).toEqual([
        "completed",
        "completed",
      ]);
      for (const child of ["payment", "shipping"]) {
        const onTimeline = page.locator(`[data-step="${child}"] [data-testid="step-child"]`);
        expect(await onTimeline.getAttribute("data-child")).toBe(`${runId}/${child}`);
        expect(await onTimeline.locator('[data-status="completed"]').count()).toBe(1);
      }

      // The race: two branches, neither decided; the 2-minute timeout wakes in at most 2 minutes
      // (read within half a second of the race's start, the countdown rounds to "2 min").
      expect(await branchStates(page)).toEqual([
        ["approval", "open"],
        ["timeout", "open"],
      ]);
      expect(await page.locator('[data-branch="approval"]').innerText()).toContain("approval-link");
      expect(await page.locator('[data-branch="timeout"]').innerText()).toMatch(
        /wakes in (2 min|1 min( \d+ s)?|\d+ s)/,
      );
      expect(await page.getByTestId("waiting").innerText()).toContain("Racing approval");

      // The deadline counts down in the browser, with no new read of the run.
      const deadline = page.getByTestId("deadline-value");
      const first = await deadline.innerText();
      expect(first).toMatch(/^in (9 min( \d+ s)?|\d+ s|10 min)$/);
      await page.waitForFunction(
        (was) => document.querySelector('[data-testid="deadline-value"]')?.textContent !== was,
        first,
        {
          timeout: 5_000,
        },
      );

      // The callback URL: on this page, copyable; never in what the status token reads.
      const url = await page.getByTestId("callback-url").innerText();
      // No DURABLE_BASE_URL here: the URL is made on localhost and the port next dev listens on; the
      // form posts to its path on this page's origin (127.0.0.1), the same server.
      expect(url).toMatch(
        new RegExp(`^http://localhost:${server.port}/api/durable/callback/[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{22}$`),
      );
      const callbackToken = url.split("/").pop()!;
      await page.getByTestId("copy-callback-url").click();
      await page.locator('[data-testid="copy-callback-url"]:has-text("Copied")').waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
      const { http, body } = await client.status(runId, token);
      expect(http).toBe(200);
      expect(JSON.stringify(body)).not.toContain(callbackToken);
      expect(await layoutProblems(page)).toEqual([]);
      await shoot(page, "run-order-1280.png");

      // A child's page links back to its parent.
      await page.locator(`[data-testid="run-children"] a[href$="${encodeURIComponent(`${runId}/payment`)}"]`).click();
      await page.getByTestId("run-parent").waitFor({ timeout: 120_000 });
      expect(await page.getByTestId("run-parent").innerText()).toContain(runId);
      await page.getByTestId("run-parent").getByRole("link").click();
      await waitForRace(page, runId, 60_000);

      // Approve through the dev form: the page POSTs the JSON body to the URL's route.
      await page.getByTestId("callback-form").locator("textarea").fill('{ "approved": true, "by": "e2e" }');
      await page.getByRole("button", { name: "POST to the callback URL" }).click();
      // The callback route's first request compiles it.
      await page.getByTestId("callback-answer").waitFor({ timeout: 180_000 });
      expect(await page.getByTestId("callback-answer").innerText()).toMatch(/^202 /);
      await page.locator('.run-page[data-run-status="completed"]').waitFor({ timeout: 60_000 });
      await page.locator('[data-branch="approval"][data-branch-state="won"]').waitFor({ timeout: 30_000 });
      expect(await branchStates(page)).toEqual([
        ["approval", "won"],
        ["timeout", "lost"],
      ]);
      expect(await page.locator('[data-branch="approval"] .race-winner').innerText()).toMatch(/won/i);
      expect(await page.getByTestId("outcome").innerText()).toBe("Order confirmed");
      expect(await page.getByTestId("deadline").getAttribute("data-deadline-state")).toBe("met");
      expect(JSON.parse(await page.getByTestId("output").innerText())).toMatchObject({
        status: "confirmed",
        approvedBy: "e2e",
      });
      // Delivered: the URL is no longer offered, and a second delivery is refused.
      await page.locator('[data-callback="approval-link"][data-callback-state="delivered"]').waitFor();
      expect(await page.getByTestId("callback-url").count()).toBe(0);
      const again = await fetch(`${base}${new URL(url).pathname}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{ "approved": false }',
      });
      expect(again.status).toBe(409);
      expect(await layoutProblems(page)).toEqual([]);

      // The list: each child links to its parent.
      await page.goto(`${base}/`);
      for (const child of ["payment", "shipping"]) {
        const link = page.locator(`tr[data-run="${runId}/${child}"] [data-testid="parent-link"] a`);
        await link.waitFor({ timeout: 60_000 });
        expect(await link.innerText()).toBe(runId);
      }
      await page.setViewportSize(PHONE);
      expect(await layoutProblems(page)).toEqual([]);
      await page.goto(`${base}/runs/${encodeURIComponent(runId)}`);
      await page.locator('.run-page[data-run-status="completed"]').waitFor();
      expect(await layoutProblems(page)).toEqual([]);
      expect(problems).toEqual([]);
      await page.close();
    }, 600_000);
  });

  describe("under next start", () => {
    const secrets = makeSecrets();
    let server: NextServer;

    beforeAll(async () => {
      await buildApp();
      server = await startNext({
        env: { DATABASE_URL: "memory://", DURABLE_DRIVER: undefined, DURABLE_DASHBOARD: "on", ...secrets.env },
      });
    }, 300_000);

    afterAll(async () => {
      await server?.stop();
    });

    it("shows the URL without the dev form; the third party's POST to it completes the order", async () => {
      const page = await browser.newPage({ viewport: PHONE });
      // In production the dashboard asks for a sign-in (docs/guide/dashboard.md, "Who may operate it").
      await signInCookie(page.context(), server.url, secrets.env.DURABLE_SECRET);
      const problems = watchProblems(page);
      try {
        const runId = await startOrder(page, server.url, 30_000);
        // No cron under next start: tick as Vercel Cron does, until the children ran and the order waits.
        const tick = () =>
          fetch(`${server.url}/api/durable/tick`, { headers: { authorization: `Bearer ${secrets.env.CRON_SECRET}` } });
        const deadline = Date.now() + 60_000;
        while ((await page.locator('[data-step="approval"][data-step-status="waiting"]').count()) === 0) {
          if (Date.now() > deadline) throw new Error("the order never reached its race");
          expect((await tick()).status).toBe(200);
          await page.waitForTimeout(250);
        }
        await waitForRace(page, runId, 30_000);
        const url = await page.getByTestId("callback-url").innerText();
        expect(await page.getByTestId("callback-form").count()).toBe(0);
        expect(await layoutProblems(page)).toEqual([]);
        await shoot(page, "run-order-390.png");

        // The third party: a POST with a JSON body, no other credential.
        const response = await fetch(`${server.url}${new URL(url).pathname}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ approved: true, by: "customer" }),
        });
        expect(response.status).toBe(202);
        await page.locator('.run-page[data-run-status="completed"]').waitFor({ timeout: 60_000 });
        await page.locator('[data-branch="approval"][data-branch-state="won"]').waitFor({ timeout: 30_000 });
        expect(await page.getByTestId("outcome").innerText()).toBe("Order confirmed");
        expect(await layoutProblems(page)).toEqual([]);
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    }, 300_000);
  });
});
