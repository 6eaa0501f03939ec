// The approvals inbox in headless Chromium, under `next start` (NODE_ENV=production,
// DURABLE_DASHBOARD=on) on the real PostgreSQL server (docs/guide/dashboard.md, "Approvals";
// docs/guide/approvals.md). Three runs of the demo `release` (quorum 2, not its author) wait.
//
// (a) Signed in, /approvals filtered by tag lists the two runs of that tag, each with its input.
// (b) The author's approval is refused (the workflow's approvers), recording nothing; ann's is
//     recorded (1 of 2, her reason shown); bob's completes the wait: the run leaves the list and
//     resumes (after the answer) to completed, shipped by bob. A reject on the other run decides it.
// (c) At 1280 px and 390 px: no sideways scrolling, no clipped text; screenshots as the other
//     dashboard tests take them.
// (d) An agent's tool call (the support chat's `refund`, needsApproval) is an item of its own, its
//     tool and arguments shown; dan's Reject decides that call and the turn resumes to completed.
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../helpers/databases";
import { CHROMIUM, CHROMIUM_FLAGS, PHONE, WIDE, watchProblems } from "./helpers/chromium";
import { makeSecrets } from "./helpers/durable-client";
import { eventually } from "./helpers/eventually";
import { layoutProblems } from "./helpers/layout";
import { buildApp, type NextServer, REPO_ROOT, startNext } from "./helpers/next-server";

const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.join(REPO_ROOT, "docs", "screenshots")
  : path.join(REPO_ROOT, "test-artifacts", "screenshots");

async function checkAndShoot(page: Page, file: string) {
  await page.evaluate(() => document.fonts.ready);
  expect(await layoutProblems(page), `${file} at ${page.viewportSize()?.width} px`).toEqual([]);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, file), fullPage: true, animations: "disabled" });
}

describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)("approvals inbox in Chromium, under next start", () => {
  const secrets = makeSecrets();
  const admin = secrets.env.DURABLE_SECRET;
  let browser: Browser;
  let server: NextServer;
  let db: pg.Client;
  let page: Page;
  let problems: string[];

  async function start(id: string, service: string, tags: string[]) {
    const response = await fetch(`${server.url}/api/durable/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ workflow: "release", input: { service, author: "olivia" }, id, tags }),
    });
    if (response.status !== 201) throw new Error(`start ${id} → ${response.status} ${await response.text()}`);
  }
  const runOf = async (id: string) =>
    (await db.query<{ status: string; output: any }>("select status, output from durable_runs where id = $1", [id]))
      .rows[0]!;
  const decisionCount = async (id: string) =>
    (await db.query<{ n: number }>("select count(*)::int as n from durable_approval_decisions where run_id = $1", [id]))
      .rows[0]!.n;

  beforeAll(async () => {
    const url = await createTestDatabase("durable_e2e_approvals");
    await buildApp();
    server = await startNext({
      env: {
        DATABASE_URL: url,
        DURABLE_DRIVER: undefined,
        DURABLE_DASHBOARD: "on",
        CHAT_MOCK_DELAY_MS: "0",
        ...secrets.env,
      },
    });
    db = new pg.Client({ connectionString: url });
    await db.connect();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    await start("rel-api", "api", ["e2e-release"]);
    await start("rel-web", "web", ["e2e-release"]);
    await start("rel-other", "billing", ["other-release"]);
    const chat = await fetch(`${server.url}/api/durable/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({
        workflow: "support-chat",
        id: "chat-refund",
        tags: ["e2e-agent"],
        input: {
          chatId: "e2e-chat",
          messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "Please refund order 1042" }] }],
        },
      }),
    });
    if (chat.status !== 201) throw new Error(`start chat-refund → ${chat.status} ${await chat.text()}`);
    // One client, one query at a time.
    for (const id of ["rel-api", "rel-web", "rel-other", "chat-refund"]) {
      await eventually(async () => (await runOf(id)).status === "waiting", { what: `${id} waiting for its approval` });
    }
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await db?.end();
    await server?.stop();
  });

  it("lists the waiting approvals of a tag, each with its input, after signing in", async () => {
    const context = await browser.newContext({ viewport: WIDE });
    page = await context.newPage();
    problems = watchProblems(page);
    await page.goto(`${server.url}/approvals`);
    await page.getByLabel("Admin secret").fill(admin);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Approvals", exact: true }).waitFor({ timeout: 30_000 });

    await page.getByLabel("Tag").fill("e2e-release");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/[?&]tag=e2e-release(&|$)/);
    const items = page.locator("li[data-approval]");
    await eventually(async () => (await items.count()) === 2, { what: "two approvals" });
    expect((await items.evaluateAll((lis) => lis.map((li) => li.getAttribute("data-approval")))).sort()).toEqual([
      "rel-api",
      "rel-web",
    ]);
    const api = page.locator('li[data-approval="rel-api"]');
    expect(await api.getByTestId("approval-input").innerText()).toContain('"service": "api"');
    expect(await api.getByTestId("approval-count").innerText()).toBe("0 of 2");
    await checkAndShoot(page, "approvals-1280.png");
    expect(problems).toEqual([]);
  }, 120_000);

  it("refuses the author, records ann, and bob's approval completes the wait", async () => {
    const api = page.locator('li[data-approval="rel-api"]');
    await api.getByLabel("Your name").fill("olivia");
    await api.getByRole("button", { name: "Approve" }).click();
    await api.getByRole("status").filter({ hasText: "may not decide" }).waitFor({ timeout: 30_000 });
    expect(await decisionCount("rel-api")).toBe(0);

    await api.getByLabel("Your name").fill("ann");
    await api.getByLabel("Reason").fill("staging is green");
    await api.getByRole("button", { name: "Approve" }).click();
    await api.getByRole("status").filter({ hasText: "1 of 2 approvals" }).waitFor({ timeout: 30_000 });
    await eventually(async () => (await api.getByTestId("approval-count").innerText()) === "1 of 2", {
      what: "the count after ann",
    });
    expect(await api.locator('[data-actor="ann"]').innerText()).toBe("Approved by ann: staging is green");

    await page.setViewportSize(PHONE);
    await checkAndShoot(page, "approvals-390.png");
    await page.setViewportSize(WIDE);

    await api.getByLabel("Your name").fill("bob");
    await api.getByRole("button", { name: "Approve" }).click();
    await eventually(async () => (await page.locator('li[data-approval="rel-api"]').count()) === 0, {
      what: "rel-api off the list",
    });
    await eventually(async () => (await runOf("rel-api")).status === "completed", { what: "rel-api resumed" });
    expect((await runOf("rel-api")).output).toEqual({ service: "api", shipped: true, by: "bob" });
    expect(await decisionCount("rel-api")).toBe(2);

    const web = page.locator('li[data-approval="rel-web"]');
    await web.getByLabel("Your name").fill("cat");
    await web.getByLabel("Reason").fill("freeze week");
    await web.getByRole("button", { name: "Reject" }).click();
    await eventually(async () => (await page.locator("li[data-approval]").count()) === 0, {
      what: "the tag's inbox empty",
    });
    await page.getByTestId("approvals-empty").waitFor();
    await eventually(async () => (await runOf("rel-web")).status === "completed", { what: "rel-web resumed" });
    expect((await runOf("rel-web")).output).toEqual({
      service: "web",
      shipped: false,
      by: "cat",
      reason: "freeze week",
    });
    expect((await runOf("rel-other")).status).toBe("waiting");
    expect(problems).toEqual([]);
  }, 120_000);

  it("lists an agent's tool call with its tool and arguments, and a Reject decides that call", async () => {
    await page.goto(`${server.url}/approvals?tag=e2e-agent`);
    const call = page.locator('li[data-kind="tool"]');
    await eventually(async () => (await call.count()) === 1, { what: "the tool call listed" });
    expect(await call.getAttribute("data-approval")).toBe("chat-refund");
    expect(await call.innerText()).toContain("tool refund");
    expect(await call.getByTestId("approval-input").innerText()).toContain("1042");
    expect(await call.getByTestId("approval-count").count()).toBe(0);
    await call.getByLabel("Your name").fill("dan");
    await call.getByLabel("Reason").fill("not eligible");
    await call.getByRole("button", { name: "Reject" }).click();
    await eventually(async () => (await page.locator('li[data-kind="tool"]').count()) === 0, {
      what: "the call off the list",
    });
    const rows = await db.query<{ actor: string; approved: boolean }>(
      "select actor, approved from durable_approval_decisions where run_id = $1",
      ["chat-refund"],
    );
    expect(rows.rows).toEqual([{ actor: "dan", approved: false }]);
    await eventually(async () => (await runOf("chat-refund")).status === "completed", { what: "chat-refund resumed" });
    expect(problems).toEqual([]);
  }, 120_000);
});
