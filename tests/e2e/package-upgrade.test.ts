// Upgrading an app from the previous release of durable-next to this one, as its user does it: the
// create-next-app 16.4 app on the previous tarball (tests/fixtures/packages) with init's files and
// a workflow, built and served with a run left waiting for its signal; then `npm install` of the
// tarball this tree packs, `npx durable-next init` again, a new build and a new server. The run
// that waited across the upgrade takes its signal on the new version and completes.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, CHROMIUM_FLAGS } from "./helpers/chromium";
import { DurableClient, makeSecrets, type Started } from "./helpers/durable-client";
import {
  addOrderWorkflow,
  copyFixture,
  initApp,
  npm,
  npmInstall,
  packTarball,
  previousTarball,
  printedInstalls,
  scriptArgs,
  startFontServer,
} from "./helpers/fixture-app";
import { buildApp, type NextServer, REPO_ROOT, startNext } from "./helpers/next-server";
import { finishOrder, startOrder } from "./helpers/order-scenario";

const installedVersion = (app: string) =>
  JSON.parse(readFileSync(path.join(app, "node_modules/durable-next/package.json"), "utf8")).version as string;

describe("an app upgraded from the previous durable-next release to this one", () => {
  const app = copyFixture("create-next-app-16");
  const out = mkdtempSync(path.join(os.tmpdir(), "durable-e2e-pack-"));
  const secrets = makeSecrets();
  const ours = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version as string;
  let fonts: Awaited<ReturnType<typeof startFontServer>>;
  let browser: Browser;
  let server: NextServer | undefined;
  let env: Record<string, string | undefined>;
  let tarball = "";
  let waiting: Started;

  beforeAll(async () => {
    fonts = await startFontServer();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    [tarball] = await Promise.all([packTarball(out), npmInstall(app)]);
    // The embedded PGlite in the app's .durable/ keeps the run across both servers.
    env = { ...secrets.env, ...fonts.env, DATABASE_URL: undefined, DURABLE_DRIVER: undefined };
  }, 600_000);

  afterAll(async () => {
    await server?.stop();
    await browser?.close();
    await fonts?.close();
    rmSync(app, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  }, 120_000);

  const serve = async () => {
    await buildApp(app, { args: scriptArgs(app, "build"), env: fonts.env as Record<string, string> });
    server = await startNext({ dir: app, env, args: scriptArgs(app, "start") });
    return server;
  };
  const stop = async () => {
    await server?.stop();
    server = undefined;
  };

  it("on the previous release, leaves a run waiting for its signal", async () => {
    await npmInstall(app, previousTarball());
    const previous = installedVersion(app);
    expect(previous).not.toBe(ours);
    const printed = await initApp(app);
    for (const args of printedInstalls(printed)) await npm(app, args);
    addOrderWorkflow(app, { lib: "durable-next", react: "durable-next/react" });
    waiting = await startOrder(await serve(), secrets, browser, "order-across-upgrade");
    await stop();
  }, 400_000);

  it("after npm install of this release and init again, the waiting run completes", async () => {
    await npmInstall(app, tarball);
    expect(installedVersion(app)).toBe(ours);
    const printed = await initApp(app);
    // Only the file the user changed (the registry, with the workflow added) is kept as it is.
    expect(printed.match(/kept as is\s+\S+/g)).toEqual(["kept as is    app/durable.ts"]);
    expect(printed).toMatch(/already there app\/api\/durable\/tick\/route\.ts/);
    const started = await serve();
    const before = await new DurableClient(started.url, secrets.env.DURABLE_SECRET, secrets.signalKey).status(
      waiting.id,
      waiting.statusToken,
    );
    expect(before.body).toMatchObject({ status: "waiting", waitingFor: { kind: "signal", name: "approval" } });
    await finishOrder(started, secrets, browser, waiting);
    // And a new run on the new release, start to end.
    await finishOrder(started, secrets, browser, await startOrder(started, secrets, browser, "order-after-upgrade"));
    await stop();
  }, 400_000);
});
