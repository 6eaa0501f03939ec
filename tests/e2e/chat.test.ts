// The support chat demo (app/chat) in headless Chromium, under `next start` on the real PostgreSQL
// server (a throwaway database), with the app's mock model answering slowly (200 ms a chunk), so an
// answer can be reloaded and stopped while it is written.
//
// (a) A reload mid-answer: the page goes on with the same answer, every text it ever showed is a
//     prefix of the stored answer (no gap, no repeat), and the text shown at the end is the run's
//     output and the text chunks of its stream.
// (b) Stop mid-answer: the turn's run is cancelled within 1 s of the click (its status polled), the
//     chunks written so far stay stored, the answer shows a "Stopped" marker, and a reload shows
//     exactly the stored chunks and the marker (loadChat, from the cancelled run).
// (b2) A cancel from elsewhere (the cancel route, as an operator): the page shows "Stopped" and the
//     reason as the answer's stream ends, and again after a reload.
// (c) A message naming `refund` parks the run on an approval: the run page lists the call with its
//     input, Approve on the chat page sends the signal, the refund row is written once, and the
//     rest of the answer streams in. Deny on the run page: no refund, the model told it was denied.
// (d) How long each text chunk took from its row in durable_stream_chunks to the screen (p50, p90),
//     as tests/e2e/research.test.ts measures it: both clocks are this machine's; printed, not asserted.
// (e) The layout at 390 px and 1280 px with a long order number, a long URL, long JSON and a long
//     tool output on screen: no sideways scrolling, nothing cut off or sticking out
//     (tests/e2e/helpers/layout.ts). The screenshots go to test-artifacts/screenshots/ (git ignores
//     it); with UPDATE_SCREENSHOTS=1 to docs/screenshots/, the ones the repository keeps.
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../helpers/databases";
import { CHROMIUM, CHROMIUM_FLAGS, PHONE, WIDE, watchProblems } from "./helpers/chromium";
import { signInCookie } from "./helpers/dashboard-session";
import { eventually } from "./helpers/eventually";
import { makeSecrets } from "./helpers/durable-client";
import { layoutProblems } from "./helpers/layout";
import { buildApp, type NextServer, REPO_ROOT, startNext } from "./helpers/next-server";

const ARTIFACTS = path.join(REPO_ROOT, "test-artifacts");
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.join(REPO_ROOT, "docs", "screenshots")
  : path.join(ARTIFACTS, "screenshots");

/** An order number as long as the tool takes (40 characters): one word in the call's input and output. */
const LONG_ORDER = "1042".repeat(10);
const LONG_URL = `https://shop.example.com/orders/${LONG_ORDER}/receipts/the-whole-receipt-as-one-long-file-name.pdf`;

interface Snapshot {
  /** Date.now() in the page when the text changed. */
  at: number;
  messageId: string;
  text: string;
}

/**
 * Before any page script runs, on every load: note each change of an assistant message's text (its
 * text parts joined) with the time it showed. Kept in sessionStorage, so a reload adds to it.
 */
const RECORDER = () => {
  const KEY = "__chatSnapshots";
  const last: Record<string, string> = {};
  const check = () => {
    const now = Date.now();
    const stored = JSON.parse(sessionStorage.getItem(KEY) ?? "[]");
    let changed = false;
    for (const li of document.querySelectorAll('[data-role="assistant"]')) {
      const messageId = li.getAttribute("data-message-id") ?? "";
      const text = [...li.querySelectorAll('[data-part="text"]')].map((p) => p.textContent ?? "").join("");
      if (last[messageId] === text) continue;
      last[messageId] = text;
      stored.push({ at: now, messageId, text });
      changed = true;
    }
    if (changed) sessionStorage.setItem(KEY, JSON.stringify(stored));
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true });
};

const snapshots = (page: Page): Promise<Snapshot[]> =>
  page.evaluate(() => JSON.parse(sessionStorage.getItem("__chatSnapshots") ?? "[]"));

/** The value below which `p` of the sorted values fall (nearest rank). */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)("support chat demo in Chromium, on PostgreSQL", () => {
  const secrets = makeSecrets();
  let browser: Browser;
  let server: NextServer;
  let db: pg.Client;

  beforeAll(async () => {
    const url = await createTestDatabase("durable_e2e_chat");
    await buildApp();
    server = await startNext({
      env: {
        DATABASE_URL: url,
        DURABLE_DRIVER: undefined,
        DURABLE_DASHBOARD: "on",
        // The app's mock model at /api/mock-model, whatever keys this machine has.
        CHAT_MOCK_MODEL: "mock-slow",
        CHAT_MOCK_DELAY_MS: "200",
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

  /** A new page on a new chat of its own browser context (its own session cookie), hydrated. */
  async function openChat(viewport = WIDE) {
    const context = await browser.newContext({ viewport });
    // The run page (approvals, Deny) is the dashboard's: signed in, as its operator would be.
    await signInCookie(context, server.url, secrets.env.DURABLE_SECRET);
    await context.addInitScript(RECORDER);
    const page = await context.newPage();
    // A reload cuts the stream being read: the browser may say so; that is the point of the test.
    const problems = watchProblems(page, /network|aborted|Failed to fetch|ERR_/i);
    await page.goto(`${server.url}/`);
    await page.getByTestId("chat-demo-link").click();
    await page.waitForURL(/\/chat\?id=chat-/, { timeout: 30_000 });
    const chatId = new URL(page.url()).searchParams.get("id")!;
    await page.locator('[data-testid="chat"][data-hydrated="true"]').waitFor({ timeout: 30_000 });
    return { context, page, chatId, problems };
  }

  async function send(page: Page, text: string) {
    await page.getByLabel("Message").fill(text);
    await page.getByRole("button", { name: "Send" }).click();
  }

  /** The chat's turn (its run id), once the POST started it. */
  async function turnOf(chatId: string): Promise<string> {
    return eventually(
      async () =>
        (await db.query<{ run_id: string }>("select run_id from durable_chats where chat_id = $1", [chatId])).rows[0]
          ?.run_id,
      { timeoutMs: 30_000, what: `a turn of chat ${chatId}` },
    );
  }

  const statusOf = async (runId: string) =>
    (await db.query<{ status: string }>("select status from durable_runs where id = $1", [runId])).rows[0]?.status;

  /** The run's text chunks in stream order, with when each was stored (ms since the epoch, the database's clock). */
  async function textChunks(runId: string) {
    const { rows } = await db.query<{ seq: string; delta: string; at: number }>(
      `select seq, data->>'delta' as delta, extract(epoch from created_at)::float8 * 1000 as at
       from durable_stream_chunks where run_id = $1 and data->>'type' = 'text-delta' order by seq`,
      [runId],
    );
    return rows;
  }

  /** The text of the assistant message of `runId` as the page shows it now (its text parts joined). */
  const shownText = (page: Page, runId: string) =>
    page.evaluate(
      (id) =>
        [...document.querySelectorAll(`[data-message-id="${id}"] [data-part="text"]`)]
          .map((p) => p.textContent ?? "")
          .join(""),
      runId,
    );

  const waitForShown = (page: Page, runId: string, expected: string, timeout = 30_000) =>
    page.waitForFunction(
      ([id, text]) =>
        [...document.querySelectorAll(`[data-message-id="${id}"] [data-part="text"]`)]
          .map((p) => p.textContent ?? "")
          .join("") === text,
      [runId, expected] as const,
      { timeout },
    );

  it("goes on with the same answer after a reload mid-answer: no gap, no repeat, the stored text", async () => {
    const { context, page, chatId, problems } = await openChat();
    try {
      await send(page, "lookupOrder 1042 and stock");
      const runId = await turnOf(chatId);
      // Both tools answered (from the shop's tables), and the text has begun.
      await page.locator('[data-tool="lookupOrder"][data-tool-state="output-available"]').waitFor({ timeout: 60_000 });
      expect(await page.locator('[data-tool="lookupOrder"]').innerText()).toContain('"status":"shipped"');
      await page.locator('[data-tool="stock"][data-tool-state="output-available"]').waitFor({ timeout: 10_000 });
      await page.waitForFunction(
        (id) => (document.querySelector(`[data-message-id="${id}"] [data-part="text"]`)?.textContent ?? "").length > 20,
        runId,
        { timeout: 30_000 },
      );
      const before = await shownText(page, runId);

      await page.reload();
      // Mid-answer: the run still writes it once the new page is up.
      await page.locator('[data-testid="chat"][data-hydrated="true"]').waitFor({ timeout: 30_000 });
      expect(await statusOf(runId)).not.toMatch(/^(completed|failed|cancelled)$/);
      await eventually(async () => (await statusOf(runId)) === "completed", {
        timeoutMs: 60_000,
        what: "the turn done",
      });

      const { rows } = await db.query<{ output: { text: string } }>("select output from durable_runs where id = $1", [
        runId,
      ]);
      const stored = rows[0]!.output.text;
      expect((await textChunks(runId)).map((c) => c.delta).join("")).toBe(stored);
      expect(stored.startsWith(before)).toBe(true);
      expect(stored.length).toBeGreaterThan(before.length);
      await waitForShown(page, runId, stored);
      await page.locator('[data-testid="chat"][data-chat-status="ready"]').waitFor({ timeout: 10_000 });

      // Every text the page ever showed for it, before and after the reload, was a prefix of the stored one.
      const seen = (await snapshots(page)).filter((s) => s.messageId === runId);
      expect(seen.length).toBeGreaterThan(5);
      for (const s of seen) expect(stored.startsWith(s.text), `shown: ${JSON.stringify(s.text)}`).toBe(true);
      // One answer, one user message: the replayed stream replaced the message rather than adding one.
      expect(await page.locator('[data-role="assistant"]').count()).toBe(1);
      expect(await page.locator('[data-role="user"]').count()).toBe(1);
      expect(await page.locator('[data-tool="lookupOrder"]').count()).toBe(1);

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, "chat.png"), fullPage: true, animations: "disabled" });

      // Loaded afresh, the finished chat comes from loadChat: the same text, rendered by the server.
      await page.reload();
      await waitForShown(page, runId, stored, 10_000);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it("Stop cancels the turn's run within 1 s and keeps what was written", async () => {
    const { context, page, chatId, problems } = await openChat();
    try {
      await send(page, "Tell me about the poster");
      const runId = await turnOf(chatId);
      await page.waitForFunction(
        (id) => (document.querySelector(`[data-message-id="${id}"] [data-part="text"]`)?.textContent ?? "").length > 20,
        runId,
        { timeout: 60_000 },
      );
      const stop = page.getByRole("button", { name: "Stop" });
      const clicked = Date.now();
      await stop.click();
      let cancelledAfter = Number.NaN;
      await eventually(
        async () => {
          if ((await statusOf(runId)) !== "cancelled") return false;
          cancelledAfter = Date.now() - clicked;
          return true;
        },
        { timeoutMs: 10_000, everyMs: 20, what: "the run cancelled" },
      );
      console.log(`\n[e2e chat] Stop → run cancelled in ${cancelledAfter} ms (status polled every 20 ms)\n`);
      expect(cancelledAfter).toBeLessThan(1000);
      await page.getByRole("button", { name: "Send" }).waitFor({ timeout: 10_000 });
      // The answer says it was stopped, on the message itself.
      const marker = page.locator(`[data-message-id="${runId}"] [data-testid="turn-end"]`);
      await marker.waitFor({ timeout: 10_000 });
      expect(await marker.innerText()).toMatch(/^Stopped/);

      // What the page kept is what was stored before the cancel; a reload shows exactly the stored part.
      const kept = await shownText(page, runId);
      const stored = (await textChunks(runId)).map((c) => c.delta).join("");
      expect(kept.length).toBeGreaterThan(20);
      expect(stored.startsWith(kept)).toBe(true);
      const { rows } = await db.query<{ n: number }>(
        "select count(*)::int as n from durable_steps where run_id = $1 and status = 'completed' and kind = 'ai'",
        [runId],
      );
      expect(rows[0]!.n).toBe(0); // the turn never finished: the answer is partial
      await page.reload();
      await waitForShown(page, runId, stored, 10_000);
      expect(await statusOf(runId)).toBe("cancelled");
      // The marker again, read from the run (loadChat): its status is cancelled.
      await marker.waitFor({ timeout: 10_000 });
      expect(await marker.innerText()).toMatch(/^Stopped/);
      expect(await page.locator('[data-testid="turn-end"]').count()).toBe(1);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it("a turn cancelled by the cancel route shows Stopped and the reason, live and after a reload", async () => {
    const { context, page, chatId, problems } = await openChat();
    try {
      await send(page, "Tell me about the mug");
      const runId = await turnOf(chatId);
      await page.waitForFunction(
        (id) => (document.querySelector(`[data-message-id="${id}"] [data-part="text"]`)?.textContent ?? "").length > 20,
        runId,
        { timeout: 60_000 },
      );
      // Not the page's Stop: an operator's cancel, which the page learns from the answer's stream.
      const cancelled = await fetch(`${server.url}/api/durable/runs/${encodeURIComponent(runId)}/cancel`, {
        method: "POST",
        headers: { authorization: `Bearer ${secrets.env.DURABLE_SECRET}`, "content-type": "application/json" },
        body: JSON.stringify({ reason: "closed by support" }),
      });
      expect(cancelled.status).toBe(200);
      const marker = page.locator(`[data-message-id="${runId}"] [data-testid="turn-end"]`);
      await marker.waitFor({ timeout: 30_000 });
      expect(await marker.innerText()).toBe("Stopped: closed by support");
      await page.locator('[data-testid="chat"][data-chat-status="ready"]').waitFor({ timeout: 10_000 });
      const stored = (await textChunks(runId)).map((c) => c.delta).join("");
      await waitForShown(page, runId, stored, 10_000);

      await page.reload();
      await waitForShown(page, runId, stored, 10_000);
      await marker.waitFor({ timeout: 10_000 });
      expect(await marker.innerText()).toBe("Stopped: closed by support");
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it("parks a refund on approval, Approve on the page refunds once and the answer goes on", async () => {
    const { context, page, chatId, problems } = await openChat();
    try {
      await send(page, "Please refund order 1042");
      const runId = await turnOf(chatId);
      const call = page.locator('[data-tool="refund"][data-tool-state="approval-requested"]');
      await call.waitFor({ timeout: 60_000 });
      expect(await call.innerText()).toContain('{"orderId":"1042"}');
      await eventually(async () => (await statusOf(runId)) === "waiting", { timeoutMs: 10_000, what: "parked" });
      const refunds = async () =>
        (
          await db.query<{ n: number; key: string }>(
            "select count(*)::int as n, min(tool_call_key) as key from demo_refunds where order_id = '1042'",
          )
        ).rows[0]!;
      expect((await refunds()).n).toBe(0);

      // The run page lists the same call with its tool and input.
      const runPage = await context.newPage();
      await runPage.goto(`${server.url}/runs/${encodeURIComponent(runId)}`);
      const listed = runPage.getByTestId("tool-approvals");
      await listed.waitFor({ timeout: 30_000 });
      expect(await listed.innerText()).toContain("refund");
      expect(await listed.innerText()).toContain('"orderId": "1042"');
      await runPage.close();

      await call.getByRole("button", { name: "Approve" }).click();
      // Answered: no more buttons (the page asks the server which calls still wait).
      const done =
        '[data-tool="refund"]:is([data-tool-state="approval-responded"], [data-tool-state="output-available"])';
      await page.locator(done).waitFor({ timeout: 60_000 });
      expect(await page.getByRole("button", { name: "Approve" }).count()).toBe(0);
      await eventually(async () => (await statusOf(runId)) === "completed", {
        timeoutMs: 60_000,
        what: "the turn done",
      });
      const { rows } = await db.query<{ output: { text: string } }>("select output from durable_runs where id = $1", [
        runId,
      ]);
      const stored = rows[0]!.output.text;
      expect(stored).toContain("The refund tool answered");
      await waitForShown(page, runId, stored);

      // Written once, by the tool's tx step: its external key, and the order marked refunded.
      const refund = await refunds();
      expect(refund.n).toBe(1);
      const { rows: steps } = await db.query<{ external_key: string }>(
        "select external_key from durable_steps where run_id = $1 and step_id like 'answer/turn-%/tool-%'",
        [runId],
      );
      expect(steps.map((s) => s.external_key)).toEqual([refund.key]);
      const order = await db.query("select status from demo_orders where id = '1042'");
      expect(order.rows[0].status).toBe("refunded");

      // A reload shows the finished turn; nothing runs again.
      await page.reload();
      await waitForShown(page, runId, stored, 10_000);
      expect(await page.locator(done).count()).toBe(1);
      expect(await page.getByRole("button", { name: "Approve" }).count()).toBe(0);
      expect((await refunds()).n).toBe(1);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it("Deny on the run page answers the call as denied: no refund, and the model is told so", async () => {
    const { context, page, chatId, problems } = await openChat();
    try {
      await send(page, "Please refund order 1043");
      const runId = await turnOf(chatId);
      await page.locator('[data-tool="refund"][data-tool-state="approval-requested"]').waitFor({ timeout: 60_000 });

      const runPage = await context.newPage();
      await runPage.goto(`${server.url}/runs/${encodeURIComponent(runId)}`);
      const listed = runPage.getByTestId("tool-approvals");
      await listed.waitFor({ timeout: 30_000 });
      // "Live" is set by an effect: a click before the page hydrated would not reach the action.
      await runPage.getByText("Live · polling").waitFor({ timeout: 60_000 });
      await listed.getByRole("button", { name: "Deny" }).click();
      await runPage.getByText("Denied: the model is told so.").waitFor({ timeout: 30_000 });
      await eventually(async () => (await statusOf(runId)) === "completed", {
        timeoutMs: 60_000,
        what: "the turn done",
      });
      await runPage.getByTestId("tool-approvals").waitFor({ state: "detached", timeout: 30_000 });
      await runPage.close();

      const { rows } = await db.query<{ output: { text: string } }>("select output from durable_runs where id = $1", [
        runId,
      ]);
      expect(rows[0]!.output.text).toContain("The refund tool answered denied from the dashboard.");
      expect((await db.query("select 1 from demo_refunds where order_id = '1043'")).rowCount).toBe(0);
      expect((await db.query("select status from demo_orders where id = '1043'")).rows[0].status).toBe("delivered");
      // The chat page was left parked: a reload reads the finished turn, denied, and the rest of its answer.
      await page.reload();
      await waitForShown(page, runId, rows[0]!.output.text, 30_000);
      expect(await page.locator('[data-tool="refund"][data-tool-state="output-denied"]').count()).toBe(1);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it("measures chunk stored → shown in the page (p50, p90)", async () => {
    const { context, page, chatId, problems } = await openChat();
    try {
      await send(page, "stock and lookupOrder 1043");
      const runId = await turnOf(chatId);
      await eventually(async () => (await statusOf(runId)) === "completed", {
        timeoutMs: 90_000,
        what: "the turn done",
      });
      const chunks = await textChunks(runId);
      const stored = chunks.map((c) => c.delta).join("");
      await waitForShown(page, runId, stored);
      const seen = (await snapshots(page)).filter((s) => s.messageId === runId);
      // A chunk shows when the text shown first holds everything up to and including it.
      let through = 0;
      const latencies = chunks.map((chunk) => {
        through += chunk.delta.length;
        const shown = seen.find((s) => s.text.length >= through);
        expect(shown, `chunk ${chunk.seq} was never shown`).toBeDefined();
        return shown!.at - chunk.at;
      });
      expect(latencies.length).toBeGreaterThanOrEqual(10);
      const sorted = [...latencies].sort((a, b) => a - b);
      console.log(
        `\n[e2e chat] text chunk stored → shown in Chromium, over ${chunks.length} chunks: ` +
          `p50 ${percentile(sorted, 0.5).toFixed(0)} ms, p90 ${percentile(sorted, 0.9).toFixed(0)} ms ` +
          `(min ${sorted[0]!.toFixed(0)}, max ${sorted.at(-1)!.toFixed(0)}); the text changed ${seen.length} times\n`,
      );
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it("fits 390 px and 1280 px with long words, a URL, JSON, a tool output and a stopped answer on screen", async () => {
    const { context, page, chatId, problems } = await openChat(PHONE);
    try {
      await send(page, `lookupOrder ${LONG_ORDER} and stock, the receipt is ${LONG_URL}`);
      const runId = await turnOf(chatId);
      await eventually(async () => (await statusOf(runId)) === "completed", {
        timeoutMs: 90_000,
        what: "the turn done",
      });
      const { rows } = await db.query<{ output: { text: string } }>("select output from durable_runs where id = $1", [
        runId,
      ]);
      await waitForShown(page, runId, rows[0]!.output.text);
      await page.locator('[data-testid="chat"][data-chat-status="ready"]').waitFor({ timeout: 10_000 });
      // On screen: the call's input and output (long JSON of one word), and the answer quoting it.
      const call = page.locator('[data-tool="lookupOrder"][data-tool-state="output-available"]');
      expect(await call.innerText()).toContain(`{"orderId":"${LONG_ORDER}"}`);
      // (The output as its receipt holds it: jsonb orders the keys.)
      expect(await call.innerText()).toContain(`→ {"found":false,"orderId":"${LONG_ORDER}"}`);
      expect(rows[0]!.output.text).toContain(`"orderId":"${LONG_ORDER}"`);
      expect(await page.locator('[data-role="user"]').innerText()).toContain(LONG_URL);

      // A second turn, stopped mid-answer: its mark is on screen too, on that answer alone.
      await send(page, "Tell me about the poster");
      const stoppedId = await eventually(
        async () => {
          const { rows: turn } = await db.query<{ run_id: string }>(
            "select run_id from durable_chats where chat_id = $1",
            [chatId],
          );
          return turn[0]?.run_id !== runId ? turn[0]?.run_id : undefined;
        },
        { timeoutMs: 30_000, what: "the second turn" },
      );
      await page.waitForFunction(
        (id) => (document.querySelector(`[data-message-id="${id}"] [data-part="text"]`)?.textContent ?? "").length > 20,
        stoppedId,
        { timeout: 60_000 },
      );
      await page.getByRole("button", { name: "Stop" }).click();
      await page.locator(`[data-message-id="${stoppedId}"] [data-testid="turn-end"]`).waitFor({ timeout: 10_000 });
      expect(await page.locator('[data-testid="turn-end"]').count()).toBe(1);

      for (const viewport of [PHONE, WIDE]) {
        await page.setViewportSize(viewport);
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(width, `the page at ${viewport.width} px`).toBeLessThanOrEqual(viewport.width);
        expect(await layoutProblems(page), `at ${viewport.width} px`).toEqual([]);
        mkdirSync(SCREENSHOTS, { recursive: true });
        await page.screenshot({
          path: path.join(SCREENSHOTS, `chat-${viewport.width}.png`),
          fullPage: true,
          animations: "disabled",
        });
      }
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);
});
