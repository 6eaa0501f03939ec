// A Next 15 app exactly as `create-next-app@15` writes it (tests/fixtures/apps/next-15), installed
// with npm, given the toolkit by `npm run add-to-app` (the copied source) and the packages
// add-to-app prints, and one workflow with a sleep and a signal. Under `next dev` and under
// `next build` + `next start`, its own scripts' flags (Turbopack): the run completes through the
// route files the toolkit wrote, watched by the status hook in a page opened at 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addOrderWorkflow, copyFixture, npm, npmInstall, printedInstalls } from "./helpers/fixture-app";
import { FixtureSession } from "./helpers/fixture-session";
import { addToApp } from "./helpers/fresh-app";
import { orderToCompletion } from "./helpers/order-scenario";

describe("a Next 15 app from create-next-app, with the toolkit copied in by add-to-app", () => {
  const app = copyFixture("next-15");
  let session: FixtureSession;

  beforeAll(async () => {
    session = await FixtureSession.open(app);
    await npmInstall(app);
    const added = addToApp(app);
    if (added.status !== 0) throw new Error(`add-to-app failed:\n${added.output}`);
    const installs = printedInstalls(added.output);
    expect(installs.length, added.output).toBeGreaterThan(0);
    for (const args of installs) await npm(app, args);
    addOrderWorkflow(app, { lib: "../../lib/durable", react: "../../lib/durable/react" });
  }, 600_000);

  afterAll(() => session?.close(), 120_000);

  it("completes a run with a sleep and a signed signal under next dev", async () => {
    const server = await session.dev();
    await orderToCompletion(server, session.secrets, session.browser, "order-dev");
    expect(server.output()).not.toMatch(/not compatible with|Error: Route segment config/);
    await session.stop();
  }, 300_000);

  it("builds, and completes a run under next start", async () => {
    await orderToCompletion(await session.buildAndStart(), session.secrets, session.browser, "order-start");
    await session.stop();
  }, 300_000);
});
