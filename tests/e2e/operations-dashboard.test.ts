// The operator's dashboard in headless Chromium, under `next start` (NODE_ENV=production,
// DURABLE_DASHBOARD=on) on the real PostgreSQL server (a throwaway database, so the test can empty
// and refill the demo shop's stock). One server, one browser.
//
// (a) Who may operate it: without the sign-in cookie the pages show no run (in the browser and in
//     the HTML over HTTP), a wrong secret is refused, the right one sets an HttpOnly,
//     SameSite=Strict cookie that is not the secret, and the dashboard opens.
// (b) Filter by tag with the form (the filter lands in the URL), select all three runs of the
//     page, Cancel: the confirmation names the count, Yes cancels them, the answer says matched 3,
//     changed 3, and the rows say cancelled.
// (c) A forged server action: the Yes request of (b), captured from the page (action id, headers,
//     body), replayed with fetch for three other waiting runs without the cookie: refused, nothing
//     changes. The same request with the cookie cancels them (so the replay was a valid action).
// (d) Fork: a checkout fails in `reserve-stock` (the posters are out of stock); restock, press
//     "Fork from here" on that step: the fork's page opens, says where it was forked from, reserves,
//     charges, and completes once the payment is settled from its page.
// (e) At 390 px and 1280 px: the filtered list with the confirmation open and the fork's page, no
//     sideways scrolling, no clipped text; screenshots as tests/e2e/dashboard.test.ts takes them.
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DASHBOARD_COOKIE } from "@/app/dashboard-session";
import { createTestDatabase } from "../helpers/databases";
import { CHROMIUM, CHROMIUM_FLAGS, PHONE, WIDE, watchProblems } from "./helpers/chromium";
import { makeSecrets, type Started } from "./helpers/durable-client";
import { eventually } from "./helpers/eventually";
import { layoutProblems } from "./helpers/layout";
import { buildApp, type NextServer, REPO_ROOT, startNext } from "./helpers/next-server";

const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.join(REPO_ROOT, "docs", "screenshots")
  : path.join(REPO_ROOT, "test-artifacts", "screenshots");

/** A server action request as the page sent it. */
interface CapturedAction {
  url: string;
  headers: Record<string, string>;
  body: string;
}

async function checkAndShoot(page: Page, file: string) {
  await page.evaluate(() => document.fonts.ready);
  expect(await layoutProblems(page), `${file} at ${page.viewportSize()?.width} px`).toEqual([]);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, file), fullPage: true, animations: "disabled" });
}

describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)("operations dashboard in Chromium, under next start", () => {
  const secrets = makeSecrets();
  const admin = secrets.env.DURABLE_SECRET;
  let browser: Browser;
  let server: NextServer;
  let db: pg.Client;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  const batch = ["ops-batch-1", "ops-batch-2", "ops-batch-3"];
  const forged = ["ops-forged-1", "ops-forged-2", "ops-forged-3"];
  let confirmRequest: CapturedAction | undefined;

  /** POST /api/durable/runs with tags, as the admin. */
  async function start(workflow: string, input: unknown, id: string, tags: string[]): Promise<Started> {
    const response = await fetch(`${server.url}/api/durable/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ workflow, input, id, tags }),
    });
    if (response.status !== 201) throw new Error(`start ${id} → ${response.status} ${await response.text()}`);
    return (await response.json()) as Started;
  }

  const statusOf = async (id: string): Promise<string> =>
    (await db.query<{ status: string }>("select status from durable_runs where id = $1", [id])).rows[0]!.status;

  const statusesOf = (ids: string[]) => Promise.all(ids.map(statusOf));

  beforeAll(async () => {
    const url = await createTestDatabase("durable_e2e_operations");
    await buildApp();
    server = await startNext({
      env: { DATABASE_URL: url, DURABLE_DRIVER: undefined, DURABLE_DASHBOARD: "on", ...secrets.env },
    });
    db = new pg.Client({ connectionString: url });
    await db.connect();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    // Runs to find and act on: three of a batch, one of another tag, three more for the forged request.
    for (const id of batch) await start("approval", { docId: id }, id, ["batch-e2e", "team:ops"]);
    await start("approval", { docId: "other" }, "ops-other", ["other-e2e"]);
    for (const id of forged) await start("approval", { docId: id }, id, ["forged-e2e"]);
    await eventually(async () => (await statusesOf([...batch, ...forged])).every((s) => s === "waiting"), {
      what: "the approvals waiting for their decision",
    });
  }, 300_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await db?.end();
    await server?.stop();
  });

  it("shows nothing without a sign-in, refuses a wrong secret, and signs in with the admin secret", async () => {
    // Over HTTP: the pages' HTML (their server-rendered payload included) holds no run.
    for (const where of ["/", "/?tag=batch-e2e", `/runs/${batch[0]}`, "/mock-providers"]) {
      const response = await fetch(`${server.url}${where}`);
      const html = await response.text();
      expect(html, where).toContain("Sign in to the dashboard");
      for (const id of [...batch, ...forged, "ops-other"]) {
        if (!where.includes(id)) expect(html, `${where} names ${id}`).not.toContain(id);
      }
      expect(html).not.toContain("notify-reviewer");
    }

    context = await browser.newContext({ viewport: WIDE });
    page = await context.newPage();
    problems = watchProblems(page);
    await page.goto(`${server.url}/runs/${batch[0]}`);
    await page.getByTestId("sign-in").waitFor();
    expect(await page.locator(".timeline, [data-step], [data-testid='run-actions']").count()).toBe(0);
    await page.goto(`${server.url}/`);
    await page.getByTestId("sign-in").waitFor();
    expect(await page.locator("[data-run], [data-demo], [data-testid='bulk-form']").count()).toBe(0);
    // The public demo stays reachable.
    expect(await page.getByTestId("chat-demo-link").count()).toBe(1);

    await page.getByLabel("Admin secret").fill(`${admin}-not`);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("That is not the admin secret.").waitFor({ timeout: 30_000 });
    expect((await context.cookies()).filter((c) => c.name === DASHBOARD_COOKIE)).toEqual([]);

    await page.getByLabel("Admin secret").fill(admin);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Runs", exact: true }).waitFor({ timeout: 30_000 });
    await page.locator(`tr[data-run="${batch[0]}"]`).waitFor();
    const [cookie] = (await context.cookies()).filter((c) => c.name === DASHBOARD_COOKIE);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", secure: false, path: "/" });
    expect(cookie!.value).toMatch(/^v1\.\d{13}\.[\w-]{16}\.[\w-]{43}$/);
    expect(cookie!.value).not.toContain(admin);
    expect(cookie!.expires * 1000 - Date.now()).toBeGreaterThan(11 * 3600_000);
    expect(problems).toEqual([]);
  }, 120_000);

  it("filters by tag, selects the page's three runs and cancels them after a confirmation", async () => {
    await page.goto(`${server.url}/`);
    await page.getByTestId("run-filters").getByLabel("Tag").fill("batch-e2e");
    await page.getByRole("button", { name: "Filter" }).click();
    // A GET form: the filter is in the URL (the empty fields too).
    await page.waitForURL(/[?&]tag=batch-e2e(&|$)/);
    const rows = page.locator("tr[data-run]");
    await eventually(async () => (await rows.count()) === 3, { what: "three rows" });
    expect((await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-run")))).sort()).toEqual(batch);
    // Each row shows its tags, each a link to the list filtered by it.
    expect(await rows.first().locator("[data-tag]").allInnerTexts()).toEqual(["batch-e2e", "team:ops"]);
    expect(await rows.first().locator('[data-tag="team:ops"]').getAttribute("href")).toBe("/?tag=team%3Aops");

    page.on("request", (request) => {
      if (request.method() !== "POST" || !request.headers()["next-action"]) return;
      if (!request.postData()?.includes("confirmId")) return;
      void request.allHeaders().then((headers) => {
        confirmRequest = { url: request.url(), headers, body: request.postData()! };
      });
    });
    await page.getByLabel("Select all on this page").check();
    const cancel = page.getByRole("button", { name: "Cancel selected (3)" });
    await cancel.click();
    const confirm = page.getByTestId("bulk-confirm");
    await confirm.waitFor({ timeout: 30_000 });
    expect(await confirm.getByRole("heading").innerText()).toBe("Cancel 3 runs?");
    // The ticks stay while it asks (React resets a form after its action; the form puts them back).
    await eventually(async () => (await page.locator('input[name="select"]:checked').count()) === 3, {
      what: "ticks kept",
    });
    // Nothing has changed before Yes.
    expect(await statusesOf(batch)).toEqual(["waiting", "waiting", "waiting"]);

    await page.setViewportSize(PHONE);
    await checkAndShoot(page, "operations-390.png");
    await page.setViewportSize(WIDE);
    await checkAndShoot(page, "operations-1280.png");

    await confirm.getByRole("button", { name: "Yes, cancel 3 runs" }).click();
    const result = page.getByTestId("bulk-result");
    await result.waitFor({ timeout: 30_000 });
    expect(await result.getAttribute("data-matched")).toBe("3");
    expect(await result.getAttribute("data-changed")).toBe("3");
    expect(await result.innerText()).toBe("Cancelled 3 of 3 selected: matched 3, changed 3.");
    expect(await statusesOf(batch)).toEqual(["cancelled", "cancelled", "cancelled"]);
    await eventually(async () => (await page.locator('tr[data-status="cancelled"]').count()) === 3, {
      what: "rows cancelled",
    });
    expect(await page.locator('input[name="select"]:checked').count()).toBe(0);
    expect(await statusOf("ops-other")).toBe("waiting");
    expect(problems).toEqual([]);
  }, 120_000);

  it("refuses the same server action replayed over HTTP without the cookie, and changes nothing", async () => {
    const captured = await eventually(async () => confirmRequest, {
      what: "the captured Yes request",
      timeoutMs: 10_000,
    });
    let body = captured.body;
    for (const [i, id] of batch.entries()) body = body.replaceAll(id, forged[i]!);
    expect(body).toContain(forged[0]);
    const headers = Object.fromEntries(
      Object.entries(captured.headers).filter(
        ([name]) => !["cookie", "host", "content-length", "connection", "accept-encoding"].includes(name),
      ),
    );
    expect(headers["next-action"]).toMatch(/^[0-9a-f]{20,}$/i);
    const send = (extra: Record<string, string>) =>
      fetch(captured.url, { method: "POST", headers: { ...headers, ...extra }, body });

    const refused = await send({});
    const text = await refused.text();
    expect(text).toContain("sign in to the dashboard first");
    expect(text).not.toContain("matched 3");
    expect(await statusesOf(forged)).toEqual(["waiting", "waiting", "waiting"]);
    // Nor with a cookie that was not signed with the secret.
    const fake = await send({ cookie: `${DASHBOARD_COOKIE}=v1.9999999999999.AAAAAAAAAAAAAAAA.${"A".repeat(43)}` });
    expect(await fake.text()).toContain("sign in to the dashboard first");
    expect(await statusesOf(forged)).toEqual(["waiting", "waiting", "waiting"]);

    // The same request with the session cookie acts: it was a valid action request all along.
    const [cookie] = (await context.cookies()).filter((c) => c.name === DASHBOARD_COOKIE);
    const accepted = await send({ cookie: `${DASHBOARD_COOKIE}=${cookie!.value}` });
    expect(await accepted.text()).toContain("matched 3, changed 3");
    expect(await statusesOf(forged)).toEqual(["cancelled", "cancelled", "cancelled"]);
  }, 60_000);

  it("forks a failed checkout from its failed step, after a restock, and the fork completes", async () => {
    await db.query("update demo_inventory set on_hand = reserved where sku = 'poster'");
    const source = await start("checkout", { sku: "poster", quantity: 2 }, "ops-checkout", ["fork-e2e"]);
    await eventually(async () => (await statusOf(source.id)) === "failed", { what: "the checkout failed" });

    await page.goto(`${server.url}/runs/${source.id}`);
    const failedStep = page.locator('[data-step="reserve-stock"][data-step-status="failed"]');
    await failedStep.waitFor({ timeout: 30_000 });
    expect(await failedStep.innerText()).toContain("out of stock");
    expect(await page.locator('[data-testid="run-tags"] [data-tag]').allInnerTexts()).toEqual(["fork-e2e"]);

    await db.query("update demo_inventory set on_hand = reserved + 15 where sku = 'poster'");
    await page.getByRole("button", { name: "Fork from step reserve-stock" }).click();
    await page.waitForURL(/\/runs\/ops-checkout-fork-[0-9a-f]{8}$/, { timeout: 30_000 });
    const forkId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
    const forkedFrom = page.getByTestId("forked-from");
    await forkedFrom.waitFor();
    expect(await forkedFrom.innerText()).toContain("Forked from ops-checkout at step reserve-stock");
    expect(await page.locator('[data-testid="run-tags"] [data-tag]').allInnerTexts()).toEqual(["fork-e2e"]);

    // The copied receipt replays (the order id is the source's), the rest runs; then the payment.
    const settle = page.getByRole("button", { name: /Settle at the payment provider/ });
    await settle.waitFor({ timeout: 60_000 });
    await page.locator('[data-step="reserve-stock"][data-step-status="completed"]').waitFor();
    await page.getByTestId("run-metadata").waitFor({ timeout: 30_000 });
    await settle.click();
    await page.locator('.run-page[data-run-status="completed"]').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId("outcome").innerText()).toBe("Order confirmed");
    await eventually(async () => (await page.getByTestId("metadata").innerText()).includes('"confirmed"'), {
      what: "metadata",
    });
    const { rows } = await db.query<{ forked_from: string; forked_from_step: string; status: string }>(
      "select forked_from, forked_from_step, status from durable_runs where id = $1",
      [forkId],
    );
    expect(rows[0]).toEqual({ forked_from: "ops-checkout", forked_from_step: "reserve-stock", status: "completed" });
    expect(await statusOf(source.id)).toBe("failed");

    await checkAndShoot(page, "run-fork-1280.png");
    await page.setViewportSize(PHONE);
    await checkAndShoot(page, "run-fork-390.png");
    await page.goto(`${server.url}/?tag=fork-e2e`);
    await eventually(async () => (await page.locator("tr[data-run]").count()) === 2, {
      what: "the source and its fork",
    });
    expect(await layoutProblems(page)).toEqual([]);
    expect(problems).toEqual([]);
  }, 180_000);
});
