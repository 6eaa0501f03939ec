// Upgrading an app from the previous release of durable-next to this one, as its user does it: the
// create-next-app 16.4 app on the previous tarball (tests/fixtures/packages) with init's files and
// a workflow, built and served with a run left waiting for its signal; then `npm install` of the
// tarball this tree packs, `npx durable-next init` again, a new build and a new server. The run
// that waited across the upgrade takes its signal on the new version and completes.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DurableClient, type Started } from "./helpers/durable-client";
import {
  addOrderWorkflow,
  copyFixture,
  initApp,
  npm,
  npmInstall,
  previousTarball,
  printedInstalls,
} from "./helpers/fixture-app";
import { FixtureSession } from "./helpers/fixture-session";
import { npmInstallFixture, packedTarball } from "./helpers/run-cache";
import { REPO_ROOT } from "./helpers/next-server";
import { finishOrder, startOrder } from "./helpers/order-scenario";

const installedVersion = (app: string) =>
  JSON.parse(readFileSync(path.join(app, "node_modules/durable-next/package.json"), "utf8")).version as string;

describe("an app upgraded from the previous durable-next release to this one", () => {
  const app = copyFixture("create-next-app-16");
  const ours = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version as string;
  // The embedded PGlite in the app's .durable/ keeps the run across both servers.
  let session: FixtureSession;
  let tarball = "";
  let waiting: Started;

  beforeAll(async () => {
    session = await FixtureSession.open(app);
    [tarball] = await Promise.all([packedTarball(), npmInstallFixture(app, "create-next-app-16")]);
  }, 600_000);

  afterAll(() => session?.close(), 120_000);

  it("on the previous release, leaves a run waiting for its signal", async () => {
    await npmInstall(app, previousTarball());
    expect(installedVersion(app)).not.toBe(ours);
    const printed = await initApp(app);
    for (const args of printedInstalls(printed)) await npm(app, args);
    addOrderWorkflow(app, { lib: "durable-next", react: "durable-next/react" });
    waiting = await startOrder(await session.buildAndStart(), session.secrets, session.browser, "order-across-upgrade");
    await session.stop();
  }, 400_000);

  it("after npm install of this release and init again, the waiting run completes", async () => {
    await npmInstall(app, tarball);
    expect(installedVersion(app)).toBe(ours);
    const printed = await initApp(app);
    // Only the file the user changed (the registry, with the workflow added) is kept as it is.
    expect(printed.match(/kept as is\s+\S+/g)).toEqual(["kept as is    app/durable.ts"]);
    expect(printed).toMatch(/already there app\/api\/durable\/tick\/route\.ts/);
    // The instrumentation file the previous init wrote, never edited, gets this version's text; and
    // an upgrade prints no fresh secret to paste over the deployed ones.
    expect(printed).toMatch(/instrumentation\.ts\s+updated: written by an earlier init, unchanged since/);
    expect(printed).toContain("No new values (");
    expect(printed).not.toMatch(/^ +(DURABLE_SECRET|CRON_SECRET|DURABLE_SIGNAL_SECRET)=\S/m);
    const server = await session.buildAndStart();
    const { secrets, browser } = session;
    const before = await new DurableClient(server.url, secrets.env.DURABLE_SECRET, secrets.signalKey).status(
      waiting.id,
      waiting.statusToken,
    );
    expect(before.body).toMatchObject({ status: "waiting", waitingFor: { kind: "signal", name: "approval" } });
    await finishOrder(server, secrets, browser, waiting);
    // And a new run on the new release, start to end.
    await finishOrder(server, secrets, browser, await startOrder(server, secrets, browser, "order-after-upgrade"));
    await session.stop();
  }, 400_000);
});
