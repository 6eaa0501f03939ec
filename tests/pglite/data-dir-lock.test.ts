// One process per embedded database: a second process that opens ./.durable/pglite while another
// holds it gets a clear error naming the directory and the holder's pid, and the first one's data
// stays intact; a lock left by a killed process does not block the next start.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAppDurable } from "@/lib/durable";
import { connect } from "@/lib/durable/drivers/connect";
import { createDurableRoutes } from "@/lib/durable/next";

const REPO = path.join(__dirname, "../..");
let dir: string;
let cwd: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  cwd = process.cwd();
  dir = mkdtempSync(path.join(tmpdir(), "durable-lock-"));
  process.chdir(dir);
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  process.chdir(cwd);
  rmSync(dir, { recursive: true, force: true });
});

/** Starts a process holding the embedded database of `dir`; resolves once it wrote its row. */
function holder(value: string): Promise<{ child: ChildProcess; pid: number; output: () => string }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(REPO, "tests/pglite/fixtures/hold-embedded-db.ts")],
    {
      cwd: REPO,
      env: { ...process.env, HOLD_DIR: dir, HOLD_VALUE: value, DATABASE_URL: "" },
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  children.push(child);
  let output = "";
  child.stdout!.on("data", (chunk) => {
    output += chunk;
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", () => {
      const ready = /READY:(\d+)/.exec(output);
      if (ready) resolve({ child, pid: Number(ready[1]), output: () => output });
    });
    child.on("exit", (code) => reject(new Error(`holder exited (${code}) before it was ready: ${output}`)));
  });
}

const exited = (child: ChildProcess) => new Promise((resolve) => child.once("exit", resolve));

async function rowsIn(): Promise<string[]> {
  const db = await connect(undefined, { driver: "pglite" });
  try {
    return (await sql<{ v: string }>`select v from held order by v`.execute(db)).rows.map((row) => row.v);
  } finally {
    await db.destroy();
  }
}

describe("the embedded database serves one process", { timeout: 90_000 }, () => {
  it("refuses a second process with the directory and the holder's pid, and keeps the first one's data", async () => {
    const first = await holder("first");
    const pgliteDir = path.join(dir, ".durable", "pglite");
    const refused = connect(undefined, { driver: "pglite" });
    await expect(refused).rejects.toThrow(pgliteDir);
    await expect(refused).rejects.toThrow(`in use by process ${first.pid}`);
    await expect(refused).rejects.toThrow(/DATABASE_URL/);
    first.child.stdin!.end();
    await exited(first.child);
    expect(first.output()).toContain("CLOSED");
    expect(existsSync(`${pgliteDir}.lock`)).toBe(false);
    expect(await rowsIn()).toEqual(["first"]);
  });

  it("answers the routes of the second process 503 with the same words, logged once", async () => {
    const first = await holder("first");
    vi.stubEnv("DATABASE_URL", "");
    try {
      const lines: string[] = [];
      const getDurable = createAppDurable({ workflows: [] });
      const routes = createDurableRoutes(getDurable, { secrets: { cron: "c" }, log: (m) => lines.push(m) });
      const pgliteDir = path.join(dir, ".durable", "pglite");
      for (let i = 0; i < 2; i++) {
        const response = await routes.tick.GET(
          new Request("http://localhost/api/durable/tick", { headers: { authorization: "Bearer c" } }),
        );
        expect(response.status).toBe(503);
        const { error } = await response.json();
        expect(error.code).toBe("database_in_use");
        expect(error.message).toContain(`The embedded database ${pgliteDir} is in use by process ${first.pid}`);
        expect(error.message).toMatch(/DATABASE_URL/);
      }
      expect(lines).toEqual([
        expect.stringContaining(`answered 503 (logged once): The embedded database ${pgliteDir}`),
      ]);
    } finally {
      vi.unstubAllEnvs();
    }
    first.child.stdin!.end();
    await exited(first.child);
    expect(await rowsIn()).toEqual(["first"]);
  });

  it("takes over the lock of a process that was killed", async () => {
    const killed = await holder("killed");
    killed.child.kill("SIGKILL");
    await exited(killed.child);
    const lock = path.join(dir, ".durable", "pglite.lock");
    expect(JSON.parse(readFileSync(lock, "utf8")).pid).toBe(killed.pid);
    const db = await connect(undefined, { driver: "pglite" });
    try {
      expect(JSON.parse(readFileSync(lock, "utf8")).pid).toBe(process.pid);
      await sql`select 1`.execute(db);
    } finally {
      await db.destroy();
    }
    expect(existsSync(lock)).toBe(false);
  });

  it("refuses a second open inside one process until the first is closed", async () => {
    const db = await connect(undefined, { driver: "pglite" });
    await sql`create table held (v text); insert into held values ('one')`.execute(db);
    await expect(connect(undefined, { driver: "pglite" })).rejects.toThrow(/this process already has it open/);
    await db.destroy();
    expect(await rowsIn()).toEqual(["one"]);
  });

  it("gives the lock back when a handle that ran no statement is destroyed", async () => {
    const db = await connect(undefined, { driver: "pglite" });
    await db.destroy();
    expect(existsSync(path.join(dir, ".durable", "pglite.lock"))).toBe(false);
    const again = await connect(undefined, { driver: "pglite" });
    await again.destroy();
  });
});
