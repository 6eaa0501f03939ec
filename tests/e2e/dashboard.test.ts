// The dashboard in headless Chromium, with no cron: under next start on the real server with encryption
// at rest on, under next dev on in-memory PGlite.
//
// Under `next start` (the built app): start the approval demo from `/`, approve it on its run page,
// and watch the timeline reach "completed" without reloading, driven by useDurableRun polling the
// status route with the run's status token (never the admin secret). Then the layout at 390 px and
// 1280 px: no sideways scrolling, no clipped text. The screenshots go to test-artifacts/screenshots/
// (git ignores it); with UPDATE_SCREENSHOTS=1 to docs/screenshots/, the ones the repository keeps.
//
// That server runs with encryption at rest on (DURABLE_ENCRYPTION_KEYS, docs/guide/encryption.md) on a
// database of the real server: every page above shows plain inputs, outputs, plans, streamed answers
// and outcomes, and at the end no durable_% table holds the demos' plaintext.
//
// Under `next dev` opened at 127.0.0.1, as a newcomer does after `npm run dev`: the page hydrates
// (next.config.ts allows the dev resources to both local addresses), and with JavaScript off the
// run page's actions still work, as plain forms.
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { sql } from "kysely";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "@/lib/durable";
import { statusTokenFor } from "@/lib/durable/auth/status-token";
import { createTestDatabase } from "../helpers/databases";
import { scanForPlaintext } from "../helpers/plaintext-scan";
import { CHROMIUM, CHROMIUM_FLAGS, PHONE, WIDE, watchProblems } from "./helpers/chromium";
import { signInCookie } from "./helpers/dashboard-session";
import { DurableClient, makeSecrets } from "./helpers/durable-client";
import { layoutProblems } from "./helpers/layout";
import { buildApp, REPO_ROOT, startNext, startNextDev, type NextServer } from "./helpers/next-server";

const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.join(REPO_ROOT, "docs", "screenshots")
  : path.join(REPO_ROOT, "test-artifacts", "screenshots");

/** Listens to a page: its errors, and every request to the status route with the bearer it carried. */
function watch(page: Page) {
  const problems = watchProblems(page);
  const statusPolls: { runId: string; bearer: string | null }[] = [];
  page.on("request", (request) => {
    const match = /\/api\/durable\/runs\/([^/?]+)$/.exec(new URL(request.url()).pathname);
    if (match)
      statusPolls.push({ runId: decodeURIComponent(match[1]!), bearer: request.headers().authorization ?? null });
  });
  return { problems, statusPolls };
}

/** Clicks a demo's Start button on `/` and waits for its run page; answers the run id. */
async function startDemo(page: Page, baseUrl: string, workflow: string, timeout = 30_000): Promise<string> {
  await page.goto(`${baseUrl}/`, { timeout });
  await page.locator(`form[data-demo="${workflow}"] button[type="submit"]`).click();
  await page.waitForURL(new RegExp(`/runs/${workflow}-[0-9a-f]+$`), { timeout });
  return decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
}

/** Waits until a completed research run's page shows its whole answer, streamed: the one its output holds. */
async function researchAnswerShown(page: Page) {
  await page.waitForFunction(
    () => {
      const output = document.querySelector('[data-testid="output"]')?.textContent;
      const answer = document.querySelector('[data-testid="answer"]');
      if (!output || !answer?.querySelector("[data-seq]")) return false;
      return answer.textContent === JSON.parse(output).answer;
    },
    undefined,
    { timeout: 30_000 },
  );
}

/** Asserts the layout at the page's current width, then saves a full-page screenshot (see SCREENSHOTS). */
async function checkAndShoot(page: Page, file: string) {
  await page.evaluate(() => document.fonts.ready);
  expect(await layoutProblems(page), `${file} at ${page.viewportSize()?.width} px`).toEqual([]);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, file), fullPage: true, animations: "disabled" });
}

// Skipped only off CI on a machine without Chromium; in CI a missing browser fails the suite.
describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)("dashboard in Chromium", () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  describe("under next start", () => {
    const secrets = makeSecrets();
    let server: NextServer;
    let page: Page;
    let watched: ReturnType<typeof watch>;
    let approvalRun: string;
    let databaseUrl: string;

    beforeAll(async () => {
      await buildApp();
      databaseUrl = await createTestDatabase("durable_e2e_dashboard");
      const key = `e2e:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`;
      server = await startNext({
        env: {
          DATABASE_URL: databaseUrl,
          DURABLE_DRIVER: undefined,
          DURABLE_DASHBOARD: "on",
          DURABLE_ENCRYPTION_KEYS: key,
          ...secrets.env,
        },
      });
      page = await browser.newPage({ viewport: WIDE });
      // In production the dashboard asks for a sign-in (docs/guide/dashboard.md, "Who may operate it").
      await signInCookie(page.context(), server.url, secrets.env.DURABLE_SECRET);
      watched = watch(page);
    }, 300_000);

    afterAll(async () => {
      await page?.close();
      await server?.stop();
    });

    it("starts the approval demo, approves it on the run page and sees it complete", async () => {
      const { problems, statusPolls } = watched;
      await page.goto(`${server.url}/`);
      await expect(page.getByRole("heading", { name: "Durable runs" }).isVisible()).resolves.toBe(true);

      // Start: the server action starts the run and opens its page.
      const runId = await startDemo(page, server.url, "plan-approval");
      approvalRun = runId;

      // The plan is drafted and the run parks on its `decision` signal.
      const approve = page.getByRole("button", { name: "Approve" });
      await approve.waitFor({ timeout: 30_000 });
      await page.locator('[data-step="plan"][data-step-status="completed"]').waitFor();
      await page.locator('[data-step="decision"][data-step-status="waiting"]').waitFor();
      expect(await page.locator('[data-testid="waiting"]').innerText()).toContain("decision");
      // The plan's table is a server panel: the page re-renders it (router.refresh) once the polled
      // status moves, a moment after the client's own panels show the wait.
      const planRows = page.locator('[data-testid="demo-details"] tbody tr');
      await planRows.nth(2).waitFor();
      expect(await planRows.count()).toBe(3);
      // The client runs, so the page says it follows the run; an unfinished run can be cancelled.
      expect(await page.locator('[data-testid="live-state"]').innerText()).toBe("Live · polling");
      expect(await page.getByRole("button", { name: "Cancel run" }).count()).toBe(1);

      // A mark on this document: a full reload would lose it.
      await page.evaluate(() => Object.assign(window, { __sameDocument: true }));
      const pollsBefore = statusPolls.length;
      await approve.click();

      // The refunds execute one step each, then the run completes; the page follows without a reload.
      await page.locator('.run-page[data-run-status="completed"]').waitFor({ timeout: 60_000 });
      await page.locator('[data-testid="output"]').waitFor();
      expect(await page.locator('[data-step^="refund:"][data-step-status="completed"]').count()).toBe(3);
      expect(await page.locator('[data-testid="progress"]').innerText()).toBe("5 steps done");
      // Beside the green badge, what came of it in the demo's words.
      expect(await page.getByTestId("outcome").innerText()).toBe("Plan executed");
      expect(await page.getByTestId("outcome").getAttribute("data-outcome")).toBe("good");
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

      // Once the run is finished, polling stops, and nothing is offered that cannot be done.
      const settled = statusPolls.length;
      await page.waitForTimeout(6_000);
      expect(statusPolls.length).toBe(settled);
      expect(await page.locator('[data-testid="live-state"]').innerText()).toBe("Finished");
      expect(await page.locator('[data-testid="run-actions"]').count()).toBe(0);
      // Only "Fork from here", on each of its five steps (docs/guide/dashboard.md, "Operating many runs").
      expect(await page.getByRole("button").filter({ hasNotText: "Fork from here" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: /^Fork from step / }).count()).toBe(5);

      await checkAndShoot(page, "run-approval-1280.png");

      // The list knows it: under "Completed", with its count.
      await page.goto(`${server.url}/?status=completed`);
      await page.getByRole("link", { name: runId }).waitFor();
      expect(await page.locator(".filter-active").innerText()).toMatch(/Completed\s+1/);
      expect(problems).toEqual([]);
    }, 180_000);

    it("fits a 390 px phone and a 1280 px screen: no sideways scrolling, no clipped text", async () => {
      const phone = await browser.newPage({ viewport: PHONE });
      await signInCookie(phone.context(), server.url, secrets.env.DURABLE_SECRET);
      const { problems } = watch(phone);
      try {
        // An export (it takes 6 to 12 s; its output has a URL), meanwhile a checkout, settled at the
        // mock payment provider from its run page.
        const exportRun = await startDemo(phone, server.url, "report-export");
        const checkout = await startDemo(phone, server.url, "checkout");
        const settle = phone.getByRole("button", { name: /Settle at the payment provider/ });
        // The charge may fail as planned up to twice and retry (after 0.5 s, then 1 s), woken by the
        // page's polls.
        await settle.waitFor({ timeout: 60_000 });
        expect(await layoutProblems(phone)).toEqual([]);
        await settle.click();
        await phone.locator('.run-page[data-run-status="completed"]').waitFor({ timeout: 60_000 });
        expect(await phone.getByTestId("outcome").innerText()).toBe("Order confirmed");
        // The stock is the shop's, not the run's: the label says so.
        await phone.getByText(/sent 2 times/).waitFor({ timeout: 10_000 });
        expect(await phone.locator('[data-testid="demo-details"]').innerText()).toContain("Stock (all runs)");
        await checkAndShoot(phone, "run-checkout-390.png");

        // The run page links to the providers' log of this run's requests, and that log pages by cursor.
        await phone.getByTestId("provider-log-link").click();
        await phone.waitForURL(/\/mock-providers\?run=/);
        const rows = phone.locator('[data-testid="request-log"] tbody tr');
        expect(await rows.count()).toBeGreaterThan(0);
        for (const link of await phone.locator('[data-testid="request-log"] a').allInnerTexts())
          expect(link).toBe(checkout);
        const ids = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-request")));
        await phone.goto(`${server.url}/mock-providers?run=${encodeURIComponent(checkout)}&before=${ids[0]}`);
        expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-request")))).toEqual(ids.slice(1));
        expect(await layoutProblems(phone)).toEqual([]);

        // The export's URL wraps after a slash, not mid-token.
        await phone.goto(`${server.url}/runs/${encodeURIComponent(exportRun)}`);
        await phone.locator('[data-testid="output"]').waitFor({ timeout: 60_000 });
        expect(await phone.locator('[data-testid="output"]').innerText()).toContain("https://");
        expect(await layoutProblems(phone)).toEqual([]);

        // A research run (on the app's mock model): its outline with the approval buttons, the answer
        // while it is written, then the whole answer with the token usage.
        const research = await startDemo(phone, server.url, "research");
        const approveOutline = phone.getByRole("button", { name: "Approve outline" });
        await approveOutline.waitFor({ timeout: 60_000 });
        await phone.getByTestId("outline").waitFor();
        expect(await layoutProblems(phone)).toEqual([]);
        await approveOutline.click();
        await phone.locator('[data-testid="answer"] [data-seq]').first().waitFor({ timeout: 30_000 });
        expect(await layoutProblems(phone)).toEqual([]);
        // While the answer is written, its step is in flight: counted as running, not as done.
        await phone.locator('.run-page[data-run-status="running"]').waitFor({ timeout: 30_000 });
        expect(await phone.getByTestId("progress").innerText()).toMatch(/^\d+ steps done · next step running$/);
        await phone.locator('.run-page[data-run-status="completed"]').waitFor({ timeout: 60_000 });
        await researchAnswerShown(phone);
        expect(await phone.locator(".research-writing").count()).toBe(0);
        expect(await phone.getByTestId("token-usage").innerText()).toMatch(/^[1-9][\d,]*$/);
        await checkAndShoot(phone, "run-research-390.png");

        // The approval the first test completed, then the list: runs are cards at this width.
        await phone.goto(`${server.url}/runs/${encodeURIComponent(approvalRun)}`);
        await phone.locator('[data-testid="output"]').waitFor();
        await checkAndShoot(phone, "run-approval-390.png");
        await phone.goto(`${server.url}/`);
        await phone.locator(`tr[data-run="${checkout}"]`).waitFor();
        // The list shows a completed run's outcome under its status.
        expect(await phone.locator(`tr[data-run="${checkout}"] [data-testid="outcome"]`).innerText()).toBe(
          "Order confirmed",
        );
        // Both tables of the page (runs and schedules) become cards.
        for (const region of ["Runs", "Schedules"]) {
          expect(await phone.getByRole("region", { name: region }).locator("thead").isVisible()).toBe(false);
        }
        await checkAndShoot(phone, "dashboard-390.png");

        await phone.setViewportSize(WIDE);
        for (const region of ["Runs", "Schedules"]) {
          expect(await phone.getByRole("region", { name: region }).locator("thead").isVisible()).toBe(true);
        }
        await checkAndShoot(phone, "dashboard-1280.png");
        await phone.goto(`${server.url}/runs/${encodeURIComponent(research)}`);
        await researchAnswerShown(phone);
        await checkAndShoot(phone, "run-research-1280.png");
        await phone.goto(`${server.url}/runs/${encodeURIComponent(checkout)}`);
        expect(await layoutProblems(phone)).toEqual([]);
        expect(problems).toEqual([]);
      } finally {
        await phone.close();
      }
    }, 180_000);

    it("left no plaintext of the demos in the database: the plan, the answers, the outputs are sealed", async () => {
      const db = await connect(databaseUrl, { driver: "pg" });
      try {
        // The plan-approval demo's customers (app/workflows/plan-approval.ts: each plan names three of
        // them), keys of the approval's, the checkout's and the research's outputs. Not the checkout's
        // order id: its metadata names it, and metadata stays plain.
        const markers = ["Lovelace", "Hopper", "Turing", "Katherine", "Dijkstra", "Liskov", "Knuth"];
        markers.push('"approvedBy"', '"executed"', '"amount"', '"answer"');
        expect(await scanForPlaintext(db, markers)).toEqual([]);
        const { rows } = await sql<{ sealed: number }>`
          select count(*)::int as sealed from durable_steps where starts_with(result #>> '{}', '$denc1.e2e.')`.execute(
          db,
        );
        expect(rows[0]!.sealed).toBeGreaterThan(10);
      } finally {
        await db.destroy();
      }
    });
  });

  describe("under next dev, opened at 127.0.0.1", () => {
    const secrets = makeSecrets();
    let server: NextServer;
    let base: string;

    beforeAll(async () => {
      // No -H, as `npm run dev` starts it: next dev then takes itself for localhost. No local cron
      // either: what moves the runs here is the page (its actions and its polls), as under next start.
      server = await startNextDev({
        env: {
          DATABASE_URL: "memory://",
          DURABLE_DRIVER: undefined,
          DURABLE_DASHBOARD: "on",
          DURABLE_DEV_CRON: "off",
          ...secrets.env,
        },
      });
      base = `http://127.0.0.1:${server.port}`;
    }, 120_000);

    afterAll(async () => {
      await server?.stop();
    });

    it("hydrates: the approval demo starts, Approve sends the decision, the page follows it to the end", async () => {
      const page = await browser.newPage({ viewport: WIDE });
      const { problems, statusPolls } = watch(page);
      try {
        // The first request of each page compiles it: minutes, at worst, on two cores.
        const runId = await startDemo(page, base, "plan-approval", 180_000);
        // "Live" is set by an effect: only a hydrated page says it.
        await page.getByText("Live · polling").waitFor({ timeout: 120_000 });
        const approve = page.getByRole("button", { name: "Approve" });
        await approve.waitFor({ timeout: 120_000 });
        await page.evaluate(() => Object.assign(window, { __sameDocument: true }));
        await approve.click();
        await page.locator('.run-page[data-run-status="completed"]').waitFor({ timeout: 120_000 });
        expect(JSON.parse(await page.locator('[data-testid="output"]').innerText())).toMatchObject({
          status: "executed",
          approvedBy: "dashboard",
        });
        expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(
          true,
        );
        expect(statusPolls.filter((p) => p.runId === runId).length).toBeGreaterThan(0);
        expect(server.output()).not.toContain("Blocked cross-origin request");
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    }, 420_000);

    it("works before hydration: with JavaScript off, Start and Approve are plain forms", async () => {
      const context = await browser.newContext({ javaScriptEnabled: false, viewport: PHONE });
      const page = await context.newPage();
      try {
        const runId = await startDemo(page, base, "plan-approval", 120_000);
        // Nothing polls in this page, so it does not claim to.
        expect(await page.getByTestId("live-state").innerText()).toBe("Snapshot");
        // Without a poller, the page moves on a reload; the run parks on its decision.
        const approve = page.getByRole("button", { name: "Approve" });
        const deadline = Date.now() + 30_000;
        while ((await approve.count()) === 0 && Date.now() < deadline) {
          await page.waitForTimeout(500);
          await page.reload();
        }
        await approve.click();
        await page.waitForLoadState("load");

        // The decision was delivered by the plain form: the run executes the plan and completes.
        const client = new DurableClient(base, secrets.env.DURABLE_SECRET, secrets.signalKey);
        const token = statusTokenFor(secrets.env.DURABLE_SECRET, runId);
        const done = await client.waitFor(runId, token, (s) => s.status === "completed", {
          everyMs: 250,
          timeoutMs: 60_000,
        });
        expect(done.output).toMatchObject({ status: "executed", approvedBy: "dashboard" });
        await page.reload();
        expect(await page.locator(".run-page").getAttribute("data-run-status")).toBe("completed");
      } finally {
        await context.close();
      }
    }, 300_000);
  });
});
