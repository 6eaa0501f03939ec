// A Next 15 app exactly as `create-next-app@15` writes it (tests/fixtures/apps/next-15), installed
// with npm, given the toolkit by `npm run add-to-app` (the copied source) and the packages
// add-to-app prints, and one workflow with a sleep and a signal. Under `next dev` and under
// `next build` + `next start`, its own scripts' flags (Turbopack): the run completes through the
// route files the toolkit wrote, watched by the status hook in a page opened at 127.0.0.1.
import { rmSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, CHROMIUM_FLAGS } from "./helpers/chromium";
import { makeSecrets } from "./helpers/durable-client";
import {
  addOrderWorkflow,
  copyFixture,
  npm,
  npmInstall,
  printedInstalls,
  scriptArgs,
  startFontServer,
} from "./helpers/fixture-app";
import { addToApp } from "./helpers/fresh-app";
import { buildApp, type NextServer, startNext, startNextDev } from "./helpers/next-server";
import { orderToCompletion } from "./helpers/order-scenario";

describe("a Next 15 app from create-next-app, with the toolkit copied in by add-to-app", () => {
  const app = copyFixture("next-15");
  const secrets = makeSecrets();
  let fonts: Awaited<ReturnType<typeof startFontServer>>;
  let browser: Browser;
  let server: NextServer | undefined;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    fonts = await startFontServer();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    await npmInstall(app);
    const added = addToApp(app);
    if (added.status !== 0) throw new Error(`add-to-app failed:\n${added.output}`);
    const installs = printedInstalls(added.output);
    expect(installs.length, added.output).toBeGreaterThan(0);
    for (const args of installs) await npm(app, args);
    addOrderWorkflow(app, { lib: "../../lib/durable", react: "../../lib/durable/react" });
    // No DATABASE_URL: the embedded PGlite in the app's .durable/, as a new user runs it.
    env = { ...secrets.env, ...fonts.env, DATABASE_URL: undefined, DURABLE_DRIVER: undefined };
  }, 600_000);

  afterAll(async () => {
    await server?.stop();
    await browser?.close();
    await fonts?.close();
    rmSync(app, { recursive: true, force: true });
  });

  it("completes a run with a sleep and a signed signal under next dev", async () => {
    server = await startNextDev({ dir: app, env, args: scriptArgs(app, "dev") });
    await orderToCompletion(server, secrets, browser, "order-dev");
    expect(server.output()).not.toMatch(/not compatible with|Error: Route segment config/);
    await server.stop();
    server = undefined;
  }, 300_000);

  it("builds, and completes a run under next start", async () => {
    // Next 15's dev server writes into .next too: build from a clean one, as after a fresh clone.
    rmSync(path.join(app, ".next"), { recursive: true, force: true });
    await buildApp(app, { args: scriptArgs(app, "build"), env: fonts.env as Record<string, string> });
    server = await startNext({ dir: app, env, args: scriptArgs(app, "start") });
    await orderToCompletion(server, secrets, browser, "order-start");
    await server.stop();
    server = undefined;
  }, 300_000);
});
