// One run of the fixtures' order workflow (fixture-app.ts) through a served app, as its users meet
// it: started over HTTP, watched by the status hook in a page opened at 127.0.0.1 (so the page
// must hydrate there), slept through, and finished by a signed Standard Webhooks signal.
import type { Browser } from "playwright-core";
import { expect } from "vitest";
import { DurableClient } from "./durable-client";
import type { NextServer } from "./next-server";

export interface OrderSecrets {
  signalKey: Uint8Array;
  env: { DURABLE_SECRET: string };
}

/** The run's status as the page shows it: the `data-status` the hook's answer set, or null. */
const pageStatus = "(document.querySelector('[data-testid=run]')?.dataset.status ?? null)";

/** Starts the order run `id` and takes it to completion; returns the page's last text. */
export async function orderToCompletion(server: NextServer, secrets: OrderSecrets, browser: Browser, id: string) {
  const client = new DurableClient(server.url, secrets.env.DURABLE_SECRET, secrets.signalKey);
  const started = await client.start("order", { item: "lamp" }, id);
  expect(started).toMatchObject({ id, created: true });

  const page = await browser.newPage();
  try {
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    // The first compile of a page under next dev takes a while on two cores.
    await page.goto(`${server.url}/watch#id=${encodeURIComponent(id)}&token=${started.statusToken}`, {
      timeout: 120_000,
    });
    // Hydrated: only the client component reads the fragment and asks the status route.
    await page.waitForFunction(`${pageStatus} !== null`, undefined, { timeout: 120_000 });

    // The sleep ends by itself (the local cron under next dev, the hook's reads under next start);
    // then the run waits for the signal, and the page says so without a reload.
    const waiting = await client.waitFor(id, started.statusToken, (s) => s.waitingFor?.kind === "signal", {
      everyMs: 200,
      timeoutMs: 60_000,
    });
    expect(waiting.status).toBe("waiting");
    expect(waiting.steps.map((s) => [s.id, s.status])).toEqual([
      ["place", "completed"],
      ["cool-off", "completed"],
      ["approval", "waiting"],
    ]);
    await page.waitForFunction(`${pageStatus} === "waiting"`, undefined, { timeout: 30_000 });

    const signalled = await client.signal(id, "approval", { by: "ada" });
    expect(signalled.http, JSON.stringify(signalled.body)).toBe(202);
    await page.waitForFunction(`${pageStatus} === "completed"`, undefined, { timeout: 60_000 });
    const text = await page.locator("[data-testid=run]").innerText();
    expect(text).toContain('"approvedBy":"ada"');
    expect(errors).toEqual([]);

    const done = await client.status(id, started.statusToken);
    expect(done.body).toMatchObject({ status: "completed", output: { item: "lamp", approvedBy: "ada" } });
    return text;
  } finally {
    await page.close();
  }
}
