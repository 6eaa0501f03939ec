// One run of the fixtures' order workflow (fixture-app.ts) through a served app, as its users meet
// it: started over HTTP, watched by the status hook in a page opened at 127.0.0.1 (so the page
// must hydrate there), slept through with nobody but the page reading it, and finished by a signed
// Standard Webhooks signal. `startOrder` takes it to the signal, `finishOrder` from there (an
// upgrade can sit between them).
import type { Browser, Page } from "playwright-core";
import { expect } from "vitest";
import { DurableClient, type Started } from "./durable-client";
import type { NextServer } from "./next-server";

export interface OrderSecrets {
  signalKey: Uint8Array;
  env: { DURABLE_SECRET: string };
}

const client = (server: NextServer, secrets: OrderSecrets) =>
  new DurableClient(server.url, secrets.env.DURABLE_SECRET, secrets.signalKey);

/** What the page shows: the `data-*` the hook's answer set (null before the first answer). */
const shown = (attribute: "status" | "waitingFor") =>
  `(document.querySelector('[data-testid=run]')?.dataset.${attribute} ?? null)`;

/** Opens the watch page of run `started` and waits until the hook's first answer is on it. */
export async function watch(browser: Browser, server: NextServer, started: Started): Promise<Page> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  // The first compile of a page under next dev takes a while on two cores.
  await page.goto(`${server.url}/watch#id=${encodeURIComponent(started.id)}&token=${started.statusToken}`, {
    timeout: 120_000,
  });
  // Hydrated: only the client component reads the fragment and asks the status route.
  await page.waitForFunction(`${shown("status")} !== null`, undefined, { timeout: 120_000 });
  expect(errors).toEqual([]);
  return page;
}

/**
 * Starts order run `id` and waits, on the page only, until it waits for the signal: the test reads
 * nothing meanwhile, so what ends the sleep is the local cron (next dev) or the page's own reads.
 */
export async function startOrder(server: NextServer, secrets: OrderSecrets, browser: Browser, id: string) {
  const started = await client(server, secrets).start("order", { item: "lamp" }, id);
  expect(started).toMatchObject({ id, created: true });
  const page = await watch(browser, server, started);
  try {
    await page.waitForFunction(`${shown("waitingFor")} === "signal"`, undefined, { timeout: 60_000 });
  } finally {
    await page.close();
  }
  const { body } = await client(server, secrets).status(id, started.statusToken);
  expect(body.status).toBe("waiting");
  expect(body.steps.map((s) => [s.id, s.status])).toEqual([
    ["place", "completed"],
    ["cool-off", "completed"],
    ["approval", "waiting"],
  ]);
  return started;
}

/** Signals run `started` (signed) and waits until the page shows it completed with the signal's payload. */
export async function finishOrder(server: NextServer, secrets: OrderSecrets, browser: Browser, started: Started) {
  const page = await watch(browser, server, started);
  try {
    const signalled = await client(server, secrets).signal(started.id, "approval", { by: "ada" });
    expect(signalled.http, JSON.stringify(signalled.body)).toBe(202);
    await page.waitForFunction(`${shown("status")} === "completed"`, undefined, { timeout: 60_000 });
    expect(await page.locator("[data-testid=run]").innerText()).toContain('"approvedBy":"ada"');
  } finally {
    await page.close();
  }
  const done = await client(server, secrets).status(started.id, started.statusToken);
  expect(done.body).toMatchObject({ status: "completed", output: { item: "lamp", approvedBy: "ada" } });
}

/** Both halves: the run from its start to completion. */
export async function orderToCompletion(server: NextServer, secrets: OrderSecrets, browser: Browser, id: string) {
  await finishOrder(server, secrets, browser, await startOrder(server, secrets, browser, id));
}
