// The runs CLI over DATABASE_URL on the real server: tests/contract/cli-runs-contract.ts, plus a
// server that does not answer.
import os from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { dropServerDatabases } from "../../scripts/support/server-database";
import { runCliRunsContract, runsCli } from "../contract/cli-runs-contract";
import { createTestDatabase } from "../helpers/databases";

const databases: string[] = [];
afterAll(() => dropServerDatabases(databases));

runCliRunsContract("PostgreSQL", async () => {
  databases.push("cli_runs");
  return { cwd: os.tmpdir(), env: { DATABASE_URL: await createTestDatabase("cli_runs") } };
});

describe("durable-next runs on a server", () => {
  it("answers an unreachable database with exit code 1 and the reason, never the password", () => {
    const where = { cwd: os.tmpdir(), env: { DATABASE_URL: "postgres://app:s3cret-pw@127.0.0.1:1/app" } };
    const answer = runsCli(where, ["get", "order-ok"]);
    expect(answer.status, answer.stderr).toBe(1);
    expect(answer.stderr).toMatch(/^durable-next runs get: .*ECONNREFUSED/);
    expect(answer.stderr).not.toContain("s3cret-pw");
    expect(answer.stderr.split("\n")).toHaveLength(1);
    const debug = runsCli(where, ["get", "order-ok"], { DEBUG: "1" });
    expect(debug.status).toBe(1);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });
});
