// `durable-next runs ls|get|cancel|retry|fork` (lib/durable/cli/runs.ts; docs/guide/cli.md) run as
// a process from source with tsx, against a database seeded by another process
// (tests/fixtures/cli-runs/seed.ts): what each command prints, its exit code, and that a refused
// command changes nothing. Run on the embedded PGlite data dir an app's `next dev` keeps
// (tests/pglite/cli-runs.test.ts) and on the real server through DATABASE_URL
// (tests/postgres/cli-runs.test.ts).
import { spawnSync } from "node:child_process";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

const REPO = path.join(__dirname, "../..");
const TSX = path.join(REPO, "node_modules/.bin/tsx");
const BIN = path.join(REPO, "lib/durable/cli/bin.ts");
export const CLI_FIXTURES = path.join(REPO, "tests/fixtures/cli-runs");
export const WORKFLOWS_MODULE = path.join(CLI_FIXTURES, "workflows.ts");

/** The key the seeded payloads are sealed under (32 bytes, base64). */
export const KEYS = `k1:${Buffer.alloc(32, 7).toString("base64")}`;

/** Where a command runs: its working directory and the variables that name the database. */
export interface CliDatabase {
  cwd: string;
  env: Record<string, string>;
}

export interface CliAnswer {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** A process from source, with none of the variables that matter here unless `env` gives them. */
export function runProcess(args: string[], where: CliDatabase, env: Record<string, string> = {}): CliAnswer {
  const base = { ...process.env };
  for (const name of ["DATABASE_URL", "DURABLE_ENCRYPTION_KEYS", "DEBUG", "DURABLE_DRIVER"]) delete base[name];
  const result = spawnSync(TSX, args, { cwd: where.cwd, encoding: "utf8", env: { ...base, ...where.env, ...env } });
  return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() };
}

/** `durable-next runs …args` with the key configured (or the variables `env` gives instead). */
export function runsCli(
  where: CliDatabase,
  args: string[],
  env: Record<string, string> = { DURABLE_ENCRYPTION_KEYS: KEYS },
) {
  return runProcess([BIN, "runs", ...args], where, env);
}

/** Seeds order-ok (completed), order-declined (failed at "charge") and ship-1 (waiting), sealed. */
export function seed(where: CliDatabase): void {
  const seeded = runProcess([path.join(CLI_FIXTURES, "seed.ts")], where, { DURABLE_ENCRYPTION_KEYS: KEYS });
  if (seeded.status !== 0) throw new Error(`seed failed: ${seeded.stderr}`);
}

const json = (answer: CliAnswer) => JSON.parse(answer.stdout);
const ids = (answer: CliAnswer) => (json(answer).runs as { id: string }[]).map((r) => r.id);

/** A refused command: its exit code and one line on stderr, nothing on stdout. */
function refused(answer: CliAnswer, code: 1 | 2, words: RegExp) {
  expect(answer.status, answer.stderr).toBe(code);
  expect(answer.stdout).toBe("");
  expect(answer.stderr.split("\n")).toHaveLength(1);
  expect(answer.stderr).toMatch(words);
}

export function runCliRunsContract(label: string, database: () => Promise<CliDatabase>) {
  describe(`durable-next runs (${label})`, { timeout: 120_000 }, () => {
    let db: CliDatabase;
    beforeAll(async () => {
      db = await database();
      seed(db);
    }, 120_000);

    it("ls: a table, newest first, and the same page as JSON", () => {
      const table = runsCli(db, ["ls"]);
      expect(table.status, table.stderr).toBe(0);
      const lines = table.stdout.split("\n");
      expect(lines[0]).toMatch(/^ID\s+WORKFLOW\s+STATUS\s+CREATED\s+UPDATED$/);
      expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 3))).toEqual([
        ["ship-1", "shipping", "waiting"],
        ["order-declined", "checkout", "failed"],
        ["order-ok", "checkout", "completed"],
      ]);
      const page = json(runsCli(db, ["ls", "--json"]));
      expect(page.nextCursor).toBeNull();
      expect(page.runs.map((r: { id: string }) => r.id)).toEqual(["ship-1", "order-declined", "order-ok"]);
      expect(Object.keys(page.runs[0]).sort()).toEqual(
        expect.arrayContaining(["id", "workflow", "version", "status", "createdAt", "updatedAt", "error", "tags"]),
      );
      // The terminal is not a deployment: no "not registered" warning on the waiting run.
      expect(page.runs[0].warnings).toEqual([]);
    });

    it("ls: list's filters as flags", () => {
      expect(ids(runsCli(db, ["ls", "--json", "--status=completed,failed", "--tag", "web"]))).toEqual([
        "order-declined",
        "order-ok",
      ]);
      expect(ids(runsCli(db, ["ls", "--json", "--status", "completed", "--status", "waiting"]))).toEqual([
        "ship-1",
        "order-ok",
      ]);
      const none = runsCli(db, ["ls", "--workflow", "shipping", "--created-before", "2000-01-01"]);
      expect([none.status, none.stdout]).toEqual([0, "no runs match"]);
    });

    it("ls: --limit pages, and --cursor takes the next page", () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 5; pages++) {
        const page = json(runsCli(db, ["ls", "--json", "--limit", "1", ...(cursor ? ["--cursor", cursor] : [])]));
        seen.push(...page.runs.map((r: { id: string }) => r.id));
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      expect(seen).toEqual(["ship-1", "order-declined", "order-ok"]);
    });

    it("ls: a value list() refuses is exit code 2 and one line", () => {
      refused(runsCli(db, ["ls", "--status", "bogus"]), 2, /runs ls: list: status "bogus" is not one of pending,/);
      refused(runsCli(db, ["ls", "--created-before", "yesterday"]), 2, /createdBefore is a Date or an ISO 8601/);
    });

    it("get: the run's fields with plain values, its steps with --steps, all of status() with --json", () => {
      const ok = json(runsCli(db, ["get", "order-ok", "--json"]));
      expect(ok).toMatchObject({ id: "order-ok", status: "completed", output: { receipt: "paid with 4242-secret" } });
      expect(ok.steps.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
        ["reserve", "completed"],
        ["charge", "completed"],
      ]);
      const text = runsCli(db, ["get", "order-declined"]);
      expect(text.status).toBe(0);
      expect(text.stdout).toMatch(/^id +order-declined$/m);
      expect(text.stdout).toMatch(/^status +failed$/m);
      expect(text.stdout).toMatch(/^error +fatal_step: card 4000-secret declined$/m);
      expect(text.stdout).toMatch(/^steps +2 \(--steps lists them\)$/m);
      const steps = runsCli(db, ["get", "order-declined", "--steps"]);
      expect(steps.stdout).toMatch(/^STEP +KIND +STATUS +ATTEMPT +COMPLETED +ERROR$/m);
      expect(steps.stdout).toMatch(/^charge +run +failed +1 .*card 4000-secret declined/m);
      const waiting = runsCli(db, ["get", "ship-1"]);
      expect(waiting.stdout).toMatch(/^waiting for +signal shipped$/m);
      expect(waiting.stdout).not.toMatch(/warnings/);
    });

    it("get: no such run is exit code 1", () => {
      refused(runsCli(db, ["get", "order-none"]), 1, /^durable-next runs get: run "order-none" not found$/);
    });

    it("get without the encryption key: exit code 1 naming the key id, no stack; ls still lists", () => {
      refused(runsCli(db, ["get", "order-ok"], {}), 1, /DecryptionError|key "?k1"?/);
      const listed = runsCli(db, ["ls", "--json"], {});
      expect(listed.status, listed.stderr).toBe(0);
      expect(ids(listed)).toEqual(["ship-1", "order-declined", "order-ok"]);
    });

    it("cancel: a waiting run, with its reason; a second cancel is exit code 1", () => {
      const done = runsCli(db, ["cancel", "ship-1", "--reason", "customer asked"]);
      expect([done.status, done.stdout, done.stderr]).toEqual([0, "cancelled ship-1", ""]);
      const after = json(runsCli(db, ["get", "ship-1", "--json"]));
      expect(after.status).toBe("cancelled");
      expect(after.error.message).toContain("customer asked");
      refused(runsCli(db, ["cancel", "ship-1"]), 1, /run "ship-1" is already finished/);
    });

    it("retry: a failed run goes back to pending; a run that has not failed is exit code 1", () => {
      refused(runsCli(db, ["retry", "order-ok"]), 1, /run "order-ok" has not failed/);
      const retried = json(runsCli(db, ["retry", "order-declined", "--json"]));
      expect(retried).toMatchObject({ id: "order-declined", status: "pending" });
      refused(runsCli(db, ["retry", "order-declined"]), 1, /has not failed/);
    });

    it("fork: refused without the app's workflows, writing nothing; with --workflows, idempotent on --id", () => {
      const args = ["fork", "order-ok", "--from-step", "charge", "--id", "order-ok-again"];
      refused(runsCli(db, args), 1, /is not registered in this deployment.*give --workflows <module>/);
      expect(ids(runsCli(db, ["ls", "--json"]))).not.toContain("order-ok-again");
      const forked = runsCli(db, [...args, "--workflows", WORKFLOWS_MODULE]);
      expect([forked.status, forked.stdout]).toEqual([0, "forked order-ok from step charge as order-ok-again"]);
      const again = json(runsCli(db, [...args, "--workflows", WORKFLOWS_MODULE, "--json"]));
      expect(again).toEqual({
        id: "order-ok-again",
        created: false,
        forkedFrom: { runId: "order-ok", stepId: "charge" },
      });
      const fork = json(runsCli(db, ["get", "order-ok-again", "--json"]));
      expect(fork).toMatchObject({ status: "pending", forkedFrom: { runId: "order-ok", stepId: "charge" } });
      expect(fork.steps.map((s: { id: string }) => s.id)).toEqual(["reserve"]);
    });

    it("fork: a step the run never reached is exit code 2", () => {
      const withWorkflows = ["--workflows", WORKFLOWS_MODULE];
      refused(
        runsCli(db, ["fork", "order-ok", "--from-step", "ship", ...withWorkflows]),
        2,
        /never reached step "ship"/,
      );
    });
  });
}
