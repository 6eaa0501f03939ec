// The research demo in headless Chromium, under `next start` on the real PostgreSQL server (a
// throwaway database), with the app's own mock model answering slowly ("mock-slow": 50 ms a word).
//
// Start it from `/`, approve its outline on the run page, and watch the answer grow on screen
// before the run is completed: a MutationObserver in the page notes when each chunk's `[data-seq]`
// span first shows. Then the answer shown is the one stored, the token usage is on the page, and
// a reader that comes back later (a reload) reads the same answer from the stream. While the answer
// is written the run is running with one step in flight (no row yet): the Progress card says "next
// step running", never that every step is done; once completed, the outcome "Answered" shows beside
// the status, and the answer reads as the mock model's own prose, not an echo. Prints how long
// each chunk took from its row in durable_stream_chunks to the screen (p50, p90): both clocks are
// this machine's, and nothing is asserted on them. Last, with JavaScript off: the outline and the
// stored answer are in the server's page, and "Approve outline" works as a plain form.
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statusTokenFor } from "@/lib/durable/auth/status-token";
import { createTestDatabase } from "../helpers/databases";
import { CHROMIUM, CHROMIUM_FLAGS, PHONE, WIDE } from "./helpers/chromium";
import { signInCookie } from "./helpers/dashboard-session";
import { DurableClient, makeSecrets } from "./helpers/durable-client";
import { buildApp, REPO_ROOT, startNext, type NextServer } from "./helpers/next-server";

const ARTIFACTS = path.join(REPO_ROOT, "test-artifacts");

interface Recorded {
  /** seq → Date.now() when its span first showed. */
  shown: Record<string, number>;
  /** The length of the answer's text, each time it grew. */
  growth: number[];
  /** How many times it grew before the page said the run was completed (null: it never said so). */
  grewBeforeCompleted: number | null;
  /** Each distinct (run status, Progress card text) the page showed, in order. */
  progress: { status: string | null; text: string }[];
}

/** From now on, notes in the page when each answer chunk shows, and when the run shows as completed. */
function recordAnswer(page: Page): Promise<void> {
  return page.evaluate(() => {
    const record: Recorded = { shown: {}, growth: [], grewBeforeCompleted: null, progress: [] };
    const check = () => {
      const now = Date.now();
      // Completion first: growth seen in the same batch of mutations does not count as before it.
      const status = document.querySelector(".run-page")?.getAttribute("data-run-status") ?? null;
      const text = document.querySelector('[data-testid="progress"]')?.textContent ?? "";
      const last = record.progress.at(-1);
      if (!last || last.status !== status || last.text !== text) record.progress.push({ status, text });
      if (record.grewBeforeCompleted === null && status === "completed")
        record.grewBeforeCompleted = record.growth.length;
      let length = 0;
      for (const span of document.querySelectorAll('[data-testid="answer"] [data-seq]')) {
        const seq = span.getAttribute("data-seq")!;
        if (!(seq in record.shown)) record.shown[seq] = now;
        length += span.textContent?.length ?? 0;
      }
      if (length > (record.growth.at(-1) ?? 0)) record.growth.push(length);
    };
    new MutationObserver(check).observe(document.body, {
      subtree: true,
      childList: true,
      characterData: true,
      attributes: true,
      attributeFilter: ["data-run-status"],
    });
    Object.assign(window, { __answer: record });
  });
}

const recorded = (page: Page) => page.evaluate(() => (window as unknown as { __answer: Recorded }).__answer);

/** The value below which `p` of the sorted values fall (nearest rank). */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)("research demo in Chromium, on PostgreSQL", () => {
  const secrets = makeSecrets();
  let browser: Browser;
  let server: NextServer;
  let db: pg.Client;
  let answeredRun: string;

  beforeAll(async () => {
    const url = await createTestDatabase("durable_e2e_research");
    await buildApp();
    server = await startNext({
      env: {
        DATABASE_URL: url,
        DURABLE_DRIVER: undefined,
        DURABLE_DASHBOARD: "on",
        // The app's mock model at /api/mock-model, whatever keys this machine has.
        MOCK_MODEL: "mock-slow",
        MOCK_MODEL_URL: undefined,
        AI_GATEWAY_API_KEY: undefined,
        OPENAI_API_KEY: undefined,
        ...secrets.env,
      },
    });
    db = new pg.Client({ connectionString: url });
    await db.connect();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await db?.end();
    await server?.stop();
  });

  it("streams the answer onto the run page while it is written, then shows the one stored", async () => {
    const page = await browser.newPage({ viewport: WIDE });
    // In production the dashboard asks for a sign-in (docs/guide/dashboard.md, "Who may operate it").
    await signInCookie(page.context(), server.url, secrets.env.DURABLE_SECRET);
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`console error: ${m.text()}`);
    });
    try {
      await page.goto(`${server.url}/`);
      await page.locator('form[data-demo="research"] button[type="submit"]').click();
      await page.waitForURL(/\/runs\/research-[0-9a-f]+$/, { timeout: 30_000 });
      const runId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
      answeredRun = runId;

      // Planned and answered by the model, the outline is written and the run waits for a person.
      const approve = page.getByRole("button", { name: "Approve outline" });
      await approve.waitFor({ timeout: 60_000 });
      await page.getByTestId("outline").waitFor({ timeout: 10_000 });
      expect(await page.getByTestId("outline").innerText()).toMatch(/^1\. /);
      expect(await page.locator('[data-step="approval"][data-step-status="waiting"]').count()).toBe(1);
      expect(await page.locator('[data-testid="answer"] [data-seq]').count()).toBe(0);
      await page.getByText("Live · polling").waitFor({ timeout: 10_000 });

      await recordAnswer(page);
      await approve.click();
      await page.locator('.run-page[data-run-status="completed"]').waitFor({ timeout: 60_000 });

      const { rows } = await db.query<{ output: { status: string; approvedBy: string; answer: string } }>(
        "select output from durable_runs where id = $1",
        [runId],
      );
      const output = rows[0]!.output;
      expect(output).toMatchObject({ status: "answered", approvedBy: "dashboard" });
      const answer = page.getByTestId("answer");
      await page.waitForFunction(
        (expected) => document.querySelector('[data-testid="answer"]')?.textContent === expected,
        output.answer,
        { timeout: 10_000 },
      );
      expect(await answer.textContent()).toBe(output.answer);
      expect(await page.locator(".research-writing").count()).toBe(0);

      // The answer grew on screen, chunk by chunk, before the run was completed.
      const record = await recorded(page);
      expect(record.grewBeforeCompleted).not.toBeNull();
      expect(record.grewBeforeCompleted!).toBeGreaterThanOrEqual(5);

      // While it ran, the Progress card counted the step in flight; done, every step is counted.
      const running = record.progress.filter((p) => p.status === "running");
      expect(running.length, JSON.stringify(record.progress)).toBeGreaterThan(0);
      for (const p of running) expect(p.text).toMatch(/^\d+ steps done · next step running$/);
      const steps = (await db.query("select count(*)::int as n from durable_steps where run_id = $1", [runId])).rows[0]
        .n;
      expect(await page.getByTestId("progress").innerText()).toBe(`${steps} steps done`);
      // The outcome beside the green badge, in the demo's words.
      expect(await page.getByTestId("outcome").innerText()).toBe("Answered");
      expect(await page.getByTestId("outcome").getAttribute("data-outcome")).toBe("good");

      // The mock model's answer reads as an answer: paragraphs of its own, not the prompt echoed.
      expect(output.answer.split("\n\n").length).toBeGreaterThanOrEqual(2);
      expect(output.answer).not.toMatch(/Echo|Approved outline|Write the final answer/);
      const outlineText = await page.getByTestId("outline").innerText();
      expect(outlineText).not.toMatch(/Echo|Part \d:|Answer briefly/);
      expect(outlineText).toMatch(/^1\. \S.*\?$/m);

      // The token usage: the sum over the run's model calls, as the status route reports them.
      const token = statusTokenFor(secrets.env.DURABLE_SECRET, runId);
      const client = new DurableClient(server.url, secrets.env.DURABLE_SECRET, secrets.signalKey);
      const { body: status } = await client.status(runId, token);
      const total = status.steps
        .filter((s) => s.kind === "ai")
        .reduce((sum, s) => sum + (s.usage?.totalTokens ?? 0), 0);
      expect(total).toBeGreaterThan(0);
      const shownTotal = Number((await page.getByTestId("token-usage").innerText()).replace(/,/g, ""));
      expect(shownTotal).toBe(total);
      expect(await page.locator('[data-step="write"] [data-testid="step-usage"]').innerText()).toMatch(
        /^[1-9][\d,]* tokens · mock-slow$/,
      );

      // From each chunk's row to the screen.
      const { rows: chunks } = await db.query<{ seq: string; at: number }>(
        `select seq, extract(epoch from created_at)::float8 * 1000 as at
         from durable_stream_chunks where run_id = $1 and step_id = 'write' order by seq`,
        [runId],
      );
      expect(chunks.length).toBeGreaterThanOrEqual(5);
      const latencies = chunks.map((c) => {
        const shown = record.shown[String(c.seq)];
        expect(shown, `chunk ${c.seq} was never shown`).toBeDefined();
        return shown! - c.at;
      });
      const sorted = [...latencies].sort((a, b) => a - b);
      console.log(
        `\n[e2e research] chunk stored → shown in Chromium, over ${chunks.length} chunks of step "write": ` +
          `p50 ${percentile(sorted, 0.5).toFixed(0)} ms, p90 ${percentile(sorted, 0.9).toFixed(0)} ms ` +
          `(min ${sorted[0]!.toFixed(0)}, max ${sorted.at(-1)!.toFixed(0)}); ` +
          `the answer grew ${record.growth.length} times, ` +
          `${record.grewBeforeCompleted} of them before the run showed completed\n`,
      );

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, "research-run.png"), fullPage: true, animations: "disabled" });

      // A reader that comes back reads the whole stream again, from its first chunk.
      await page.reload();
      await page.waitForFunction(
        (expected) => {
          const answer = document.querySelector('[data-testid="answer"]');
          return !!answer?.querySelector("[data-seq]") && answer.textContent === expected;
        },
        output.answer,
        { timeout: 10_000 },
      );
      expect(await page.locator('[data-testid="answer"] [data-seq]').count()).toBe(chunks.length);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);

  it("works before hydration: the outline, the stored answer and the approval are in the server's page", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: PHONE });
    await signInCookie(context, server.url, secrets.env.DURABLE_SECRET);
    const page = await context.newPage();
    try {
      // The answered run: its outline and answer as the server read them.
      await page.goto(`${server.url}/runs/${encodeURIComponent(answeredRun)}`);
      const { rows } = await db.query<{ output: { answer: string } }>("select output from durable_runs where id = $1", [
        answeredRun,
      ]);
      expect(await page.getByTestId("answer").textContent()).toBe(rows[0]!.output.answer);
      expect(await page.getByTestId("outline").innerText()).toMatch(/^1\. /);

      // A new one, rejected with the plain form.
      await page.goto(`${server.url}/`);
      await page.locator('form[data-demo="research"] button[type="submit"]').click();
      await page.waitForURL(/\/runs\/research-[0-9a-f]+$/, { timeout: 30_000 });
      const runId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
      expect(await page.getByTestId("answer").innerText()).toContain("once the outline is approved");
      const reject = page.getByRole("button", { name: "Reject" });
      const deadline = Date.now() + 60_000;
      while ((await reject.count()) === 0 && Date.now() < deadline) {
        await page.waitForTimeout(500);
        await page.reload();
      }
      expect(await page.getByTestId("outline").innerText()).toMatch(/^1\. /);
      await reject.click();
      await page.waitForLoadState("load");
      const client = new DurableClient(server.url, secrets.env.DURABLE_SECRET, secrets.signalKey);
      const done = await client.waitFor(
        runId,
        statusTokenFor(secrets.env.DURABLE_SECRET, runId),
        (s) => s.status === "completed",
        { everyMs: 250, timeoutMs: 30_000 },
      );
      expect(done.output).toMatchObject({ status: "rejected" });
      await page.reload();
      expect(await page.getByTestId("answer").innerText()).toContain("rejected");
    } finally {
      await context.close();
    }
  }, 180_000);
});
