// The path of a new user with the npm package: the app `create-next-app` 16.4 writes
// (tests/fixtures/apps/create-next-app-16: cacheComponents, Tailwind, the Geist fonts), installed
// with npm, then `npm install <the durable-next tarball>`, `npx durable-next init` and the install
// it prints, and one workflow with a sleep and a signal. Under `next dev` and under `next build` +
// `next start` the run completes through the route files init wrote, watched by the status hook in
// a page opened at 127.0.0.1; and the testing guide's recipe runs as written with `npx vitest run`.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addOrderWorkflow, copyFixture, initApp, npm, npmInstall, npx, printedInstalls } from "./helpers/fixture-app";
import { FixtureSession } from "./helpers/fixture-session";
import { npmInstallFixture, packedTarball } from "./helpers/run-cache";
import { REPO_ROOT } from "./helpers/next-server";
import { orderToCompletion } from "./helpers/order-scenario";

const TESTING_GUIDE = path.join(REPO_ROOT, "docs/guide/testing.md");

/** The guide's files (`<!-- recipe: path -->` before a code block) and its `npm install` lines. */
function testingRecipe() {
  const page = readFileSync(TESTING_GUIDE, "utf8");
  const files = [...page.matchAll(/<!-- recipe: (\S+) -->\n```\w+\n([\s\S]*?)\n```\n/g)].map((m) => ({
    path: m[1]!,
    content: `${m[2]}\n`,
  }));
  const installs = [...page.matchAll(/^npm install (.+)$/gm)].map((m) => [
    "install",
    "--prefer-offline",
    ...m[1]!.split(/\s+/),
  ]);
  return { files, installs };
}

describe("the app create-next-app 16.4 writes, with the durable-next package and init", () => {
  const app = copyFixture("create-next-app-16");
  let session: FixtureSession;
  let initOutput = "";

  beforeAll(async () => {
    session = await FixtureSession.open(app);
    const [tarball] = await Promise.all([packedTarball(), npmInstallFixture(app, "create-next-app-16")]);
    await npmInstall(app, tarball);
    initOutput = await initApp(app);
    for (const args of printedInstalls(initOutput)) await npm(app, args);
    addOrderWorkflow(app, { lib: "durable-next", react: "durable-next/react" });
  }, 600_000);

  afterAll(() => session?.close(), 120_000);

  it("init wrote the routes, the instance and the config, and told what to install", () => {
    const read = (rel: string) => readFileSync(path.join(app, rel), "utf8");
    const ours = (rel: string) => readFileSync(path.join(REPO_ROOT, rel), "utf8");
    expect(read("app/api/durable/tick/route.ts")).toBe(ours("app/api/durable/tick/route.ts"));
    expect(read("app/durable.ts")).toMatch(/from "durable-next"/);
    expect(read("next.config.ts")).toMatch(/cacheComponents: true/);
    expect(read("next.config.ts")).toMatch(/serverExternalPackages: \["@electric-sql\/pglite"\]/);
    expect(read("next.config.ts")).toMatch(/allowedDevOrigins: \["localhost", "127\.0\.0\.1"\]/);
    expect(JSON.parse(read("vercel.json")).crons).toEqual([{ path: "/api/durable/tick", schedule: "* * * * *" }]);
    expect(initOutput).toMatch(/DURABLE_SECRET=/);
    expect(JSON.parse(read("package.json")).dependencies).toHaveProperty("zod");
    // No copy of the toolkit in the app: it comes from node_modules.
    expect(() => read("lib/durable/index.ts")).toThrow();
  });

  it("completes a run with a sleep and a signed signal under next dev", async () => {
    const server = await session.dev();
    await orderToCompletion(server, session.secrets, session.browser, "order-dev");
    expect(server.output()).not.toMatch(/not compatible with|Route segment config/);
    expect(server.output()).toContain("[durable cron]");
    await session.stop();
  }, 300_000);

  it("builds, and completes a run under next start with only the page reading it", async () => {
    await orderToCompletion(await session.buildAndStart(), session.secrets, session.browser, "order-start");
    await session.stop();
  }, 300_000);

  it("runs the testing guide's recipe as written", async () => {
    const { files, installs } = testingRecipe();
    expect(files.map((f) => f.path)).toEqual([
      "vitest.config.mts",
      "app/workflows/onboarding.ts",
      "tests/onboarding.test.ts",
    ]);
    for (const args of installs) await npm(app, args);
    for (const file of files) {
      mkdirSync(path.dirname(path.join(app, file.path)), { recursive: true });
      writeFileSync(path.join(app, file.path), file.content);
    }
    const output = await npx(app, ["vitest", "run"]);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: vitest's colours
    expect(output.replace(/\x1b\[[0-9;]*m/g, "")).toMatch(/Tests\s+3 passed \(3\)/);
  }, 300_000);
});
