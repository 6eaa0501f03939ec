// The runs CLI on the embedded PGlite data dir an app's `next dev` keeps in ./.durable/ (DATABASE_URL
// unset): tests/contract/cli-runs-contract.ts, plus what only that database has (the directory may
// be missing, or held by another process), and docs/guide/cli.md's commands, run as written.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lockDataDir } from "@/lib/durable/drivers/data-dir-lock";
import { runCliRunsContract, runsCli, seed, WORKFLOWS_MODULE } from "../contract/cli-runs-contract";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function appDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "durable-cli-runs-"));
  dirs.push(dir);
  return dir;
}

runCliRunsContract("embedded PGlite", async () => ({ cwd: appDir(), env: {} }));

describe("durable-next runs on the embedded database", { timeout: 60_000 }, () => {
  it("refuses with exit code 2, creating nothing, where DATABASE_URL is unset and there is no .durable/pglite", () => {
    const cwd = appDir();
    const answer = runsCli({ cwd, env: {} }, ["ls"]);
    expect(answer.status, answer.stderr).toBe(2);
    expect(answer.stderr).toMatch(/DATABASE_URL is not set and .*\.durable\/pglite does not exist/);
    expect(() => rmSync(path.join(cwd, ".durable"))).toThrow(/ENOENT/);
  });

  it("answers a data dir another process holds with exit code 1 and who holds it", () => {
    const cwd = appDir();
    const dir = path.join(cwd, ".durable", "pglite");
    mkdirSync(dir, { recursive: true });
    const unlock = lockDataDir(dir);
    try {
      const answer = runsCli({ cwd, env: {} }, ["ls"]);
      expect(answer.status, answer.stderr).toBe(1);
      expect(answer.stderr.split("\n")).toHaveLength(1);
      expect(answer.stderr).toContain(String(process.pid));
    } finally {
      unlock();
    }
  });

  it("refuses a DATABASE_URL that is not postgres:// with exit code 2, and never prints its password", () => {
    const answer = runsCli({ cwd: appDir(), env: { DATABASE_URL: "mysql://app:s3cret@host/db" } }, ["ls"]);
    expect(answer.status).toBe(2);
    expect(answer.stderr).toMatch(/not a postgres:\/\/ or postgresql:\/\/ URL \(mysql:\/\/app:\*\*\*@host\/db\)/);
    expect(answer.stderr).not.toContain("s3cret");
  });
});

/** The page's commands in order: `<!-- command: name [exit N] -->` and the sh block after it. */
function guideCommands(): { name: string; exit: number; args: string[] }[] {
  const page = readFileSync(path.join(__dirname, "../../docs/guide/cli.md"), "utf8");
  return [...page.matchAll(/<!-- command: ([\w-]+)(?: exit (\d))? -->\n```sh\n(.*)\n```/g)].map((m) => {
    const words = [...m[3]!.matchAll(/"([^"]*)"|(\S+)/g)].map((w) => w[1] ?? w[2]!);
    expect(words.slice(0, 3)).toEqual(["npx", "durable-next", "runs"]);
    return {
      name: m[1]!,
      exit: Number(m[2] ?? 0),
      args: words.slice(3).map((w) => (w === "workflows.ts" ? WORKFLOWS_MODULE : w)),
    };
  });
}

describe("docs/guide/cli.md's commands", { timeout: 240_000 }, () => {
  it("run in order on the page's three runs, each with the exit code the page gives", () => {
    const commands = guideCommands();
    expect(commands.map((c) => c.name)).toEqual([
      "ls",
      "ls-failed",
      "get",
      "cancel",
      "retry",
      "retry-again",
      "fork-unregistered",
      "fork",
    ]);
    const where = { cwd: appDir(), env: {} };
    seed(where);
    for (const { name, exit, args } of commands) {
      const answer = runsCli(where, args);
      expect([name, answer.status], answer.stderr).toEqual([name, exit]);
    }
  });
});
