// What a new user met with the `durable-next` command (lib/durable/cli), run from source with tsx:
// init on an upgrade refreshes the instrumentation file it wrote and the app never edited (it was
// left at the old text) and keeps an edited one; it never prints fresh secrets for an app that
// already has them (a pasted one would break every status link and callback URL), and names
// DURABLE_BASE_URL; `durable-next migrate` migrates the database DATABASE_URL names, and says
// clearly, with its exit code, when it is unset or unreachable (docs/guide/installing.md).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { dropServerDatabases } from "../../scripts/support/server-database";
import { createTestDatabase } from "../helpers/databases";

const REPO = path.join(__dirname, "../..");
const TSX = path.join(REPO, "node_modules/.bin/tsx");
const BIN = path.join(REPO, "lib/durable/cli/bin.ts");
const dirs: string[] = [];
const databases: string[] = [];

afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await dropServerDatabases(databases);
});

const SECRETS = ["DURABLE_SECRET", "CRON_SECRET", "DURABLE_SIGNAL_SECRET"];

/** `durable-next …args` from source, with none of the secrets in its environment unless `env` gives them. */
function cli(args: string[], env: Record<string, string> = {}) {
  const base = { ...process.env };
  for (const name of [...SECRETS, "DATABASE_URL"]) delete base[name];
  const result = spawnSync(TSX, [BIN, ...args], { cwd: REPO, encoding: "utf8", env: { ...base, ...env } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, output: result.stdout + result.stderr };
}

function fixtureApp(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "durable-cli-upgrade-"));
  dirs.push(dir);
  cpSync(path.join(REPO, "tests/fixtures/apps/next-15"), dir, { recursive: true });
  return dir;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** instrumentation.ts as durable-next 0.1.0's init wrote it (tests/fixtures/packages). */
const OLD_INSTRUMENTATION = `// Next.js calls register() once when the server starts.
export async function register() {
  // Under \`next dev\` only: a local stand-in for Vercel Cron that calls /api/durable/tick every few
  // seconds (DURABLE_DEV_CRON_MS; DURABLE_DEV_CRON=off stops it), so sleeps and retry delays come
  // due with nothing else running. Compiled away in production builds, where Vercel Cron calls the
  // route. next dev logs each call; to hide them, add to next.config:
  //   logging: { incomingRequests: { ignore: [/^\\/api\\/durable\\/tick/] } }
  if (process.env.NEXT_RUNTIME === "nodejs" && process.env.NODE_ENV === "development") {
    const { startDevCron } = await import("durable-next/next");
    startDevCron();
  }
}
`;

/** An app that ran an older init: its record holds `instrumentation` as that init wrote it. */
function appAfterOlderInit(instrumentation: string, recorded = instrumentation): string {
  const app = fixtureApp();
  expect(cli(["init", app]).status).toBe(0);
  const recordFile = path.join(app, ".durable-next.json");
  const record = JSON.parse(readFileSync(recordFile, "utf8"));
  record.version = "0.1.0";
  record.files["instrumentation.ts"] = sha256(recorded);
  writeFileSync(recordFile, JSON.stringify(record));
  writeFileSync(path.join(app, "instrumentation.ts"), instrumentation);
  return app;
}

describe("init on an upgrade", () => {
  it("refreshes an instrumentation file it wrote that the app never edited", () => {
    const app = appAfterOlderInit(OLD_INSTRUMENTATION);
    const result = cli(["init", app]);
    expect(result.status, result.output).toBe(0);
    const now = readFileSync(path.join(app, "instrumentation.ts"), "utf8");
    expect(now).not.toBe(OLD_INSTRUMENTATION);
    expect(now).toContain("calls /api/durable/tick when the\n  // next run wakes and at least every 5 s");
    expect(result.output).toMatch(/instrumentation\.ts\s+updated: written by an earlier init, unchanged since/);
    const record = JSON.parse(readFileSync(path.join(app, ".durable-next.json"), "utf8"));
    expect(record.files["instrumentation.ts"]).toBe(sha256(now));
  });

  it("keeps an instrumentation file the app edited since", () => {
    const edited = OLD_INSTRUMENTATION.replace(
      "export async function register() {",
      "export async function register() {\n  // mine",
    );
    const app = appAfterOlderInit(edited, OLD_INSTRUMENTATION);
    const result = cli(["init", app]);
    expect(result.status, result.output).toBe(0);
    expect(readFileSync(path.join(app, "instrumentation.ts"), "utf8")).toBe(edited);
    expect(result.output).toMatch(/instrumentation\.ts\s+unchanged: already starts the local cron/);
  });

  it("prints no fresh secret values on an upgrade, even when it finds none here", () => {
    const app = appAfterOlderInit(OLD_INSTRUMENTATION);
    const result = cli(["init", app]);
    expect(result.status, result.output).toBe(0);
    expect(result.output).toContain("No new values (this app ran init before)");
    for (const name of SECRETS) expect(result.output).not.toMatch(new RegExp(`${name}=\\S`));
  });
});

describe("the secrets init prints", () => {
  const valueLines = (output: string) => SECRETS.filter((name) => new RegExp(`^ +${name}=\\S`, "m").test(output));

  it("are fresh values for an app that has none", () => {
    const result = cli(["init", fixtureApp()]);
    expect(result.status, result.output).toBe(0);
    expect(valueLines(result.output)).toEqual(SECRETS);
  });

  it.each([
    [".env.local", "DURABLE_SECRET=from-env-local\n"],
    [".env", "# mine\nexport CRON_SECRET='from-env'\n"],
    [".env.production.local", 'DURABLE_SIGNAL_SECRET="whsec_abc"\n'],
    [".env.development", "DURABLE_SECRET = dev-value # a comment\n"],
  ])("are not printed when %s sets one: the set one is kept, none is new", (file, text) => {
    const app = fixtureApp();
    writeFileSync(path.join(app, file), text);
    const result = cli(["init", app]);
    expect(result.status, result.output).toBe(0);
    expect(valueLines(result.output)).toEqual([]);
    expect(result.output).toMatch(new RegExp(`: kept \\(set in ${file.replace(/\./g, "\\.")};`));
    expect(result.output).toContain("No new values (the app sets some already)");
    for (const value of ["from-env-local", "from-env", "whsec_abc", "dev-value"])
      expect(result.output).not.toContain(value);
  });

  it("are not printed when the environment has one, and an empty assignment does not count", () => {
    const app = fixtureApp();
    writeFileSync(path.join(app, ".env.local"), "DURABLE_SECRET=\n");
    const result = cli(["init", app], { CRON_SECRET: "in-the-shell" });
    expect(result.status, result.output).toBe(0);
    expect(valueLines(result.output)).toEqual([]);
    expect(result.output).toContain("CRON_SECRET: kept (set in the environment;");
    expect(result.output).toMatch(/DURABLE_SECRET: not found here/);
    expect(result.output).not.toContain("in-the-shell");
  });

  it("come with DURABLE_BASE_URL, the origin callback URLs need behind Deployment Protection", () => {
    const result = cli(["init", fixtureApp()]);
    expect(result.output).toMatch(/set DURABLE_BASE_URL to the app's public origin/);
    expect(result.output).toContain("Deployment Protection");
    expect(result.output).toContain("npx durable-next migrate");
  });
});

describe("durable-next migrate", { timeout: 120_000 }, () => {
  it("migrates the database DATABASE_URL names, then finds nothing new", async () => {
    databases.push("cli_migrate");
    const url = await createTestDatabase("cli_migrate");
    const first = cli(["migrate"], { DATABASE_URL: url });
    expect(first.status, first.output).toBe(0);
    expect(first.stdout).toMatch(/durable-next migrate: .*cli_migrate: up to date \(applied 0001_durable, /);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query("select count(*)::int as n from durable_runs");
      expect(rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
    const again = cli(["migrate"], { DATABASE_URL: url });
    expect(again.status, again.output).toBe(0);
    expect(again.stdout).toContain("up to date (no new migration;");
  });

  it("answers an unreachable database with exit code 1 and the reason, never the password", () => {
    const result = cli(["migrate"], { DATABASE_URL: "postgres://app:s3cret-pw@127.0.0.1:1/app" });
    expect(result.status, result.output).toBe(1);
    expect(result.stderr).toMatch(/could not migrate postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/app: .*ECONNREFUSED/);
    expect(result.output).not.toContain("s3cret-pw");
  });

  it("answers a missing or unusable DATABASE_URL, and extra words, with exit code 2", () => {
    const unset = cli(["migrate"]);
    expect(unset.status).toBe(2);
    expect(unset.stderr).toMatch(/DATABASE_URL is not set/);
    const wrong = cli(["migrate"], { DATABASE_URL: "mysql://x@y/z" });
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toMatch(/not a postgres:\/\/ or postgresql:\/\/ URL/);
    const extra = cli(["migrate", "--url", "x"]);
    expect(extra.status).toBe(2);
    expect(extra.stderr).toContain("usage: durable-next init [dir] [--dry-run]\n       durable-next migrate");
  });
});
