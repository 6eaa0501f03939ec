// The words of `durable-next runs` (lib/durable/cli/runs-args.ts) and what it prints for a person
// (runs-output.ts), in process; the commands against a database are tests/contract/cli-runs-contract.ts.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseRunsArgs } from "@/lib/durable/cli/runs-args";
import { listText } from "@/lib/durable/cli/runs-output";

describe("runs' words", () => {
  it("read list's filters from flags, --flag=value and repeated or comma-listed statuses", () => {
    const command = parseRunsArgs([
      "ls",
      "--status",
      "failed,cancelled",
      "--status=waiting",
      "--workflow=checkout",
      "--tag",
      "vip",
      "--parent",
      "p-1",
      "--metadata",
      '{"plan":"pro"}',
      "--created-after",
      "2026-01-01",
      "--created-before",
      "2026-02-01",
      "--before-patch",
      "new-tax",
      "--version",
      "v2",
      "--limit",
      "20",
      "--cursor",
      "c1",
      "--json",
    ]);
    expect(command).toMatchObject({ verb: "ls", json: true });
    expect(command.list).toEqual({
      status: ["failed", "cancelled", "waiting"],
      workflow: "checkout",
      tag: "vip",
      parentId: "p-1",
      metadata: { plan: "pro" },
      createdAfter: "2026-01-01",
      createdBefore: "2026-02-01",
      beforePatch: "new-tax",
      version: "v2",
      limit: 20,
      cursor: "c1",
    });
    expect(parseRunsArgs(["ls"]).list).toEqual({});
  });

  it("read each verb's id and options", () => {
    expect(parseRunsArgs(["get", "r1", "--steps"])).toMatchObject({ verb: "get", id: "r1", steps: true });
    expect(parseRunsArgs(["cancel", "r1", "--reason", "asked", "--keep-children"])).toMatchObject({
      id: "r1",
      reason: "asked",
      keepChildren: true,
    });
    expect(parseRunsArgs(["retry", "r1"])).toMatchObject({ verb: "retry", id: "r1" });
    expect(parseRunsArgs(["fork", "r1", "--from-step", "charge", "--id", "r2", "--workflows", "w.mjs"])).toMatchObject({
      fromStep: "charge",
      forkId: "r2",
      workflows: "w.mjs",
    });
  });

  it.each([
    [[], /say what to do: ls, get, cancel, retry, fork/],
    [["list"], /unknown command "list"/],
    [["ls", "--colour"], /runs ls: unknown option --colour/],
    [["ls", "--steps"], /runs ls: unknown option --steps/],
    [["ls", "--workflow"], /--workflow needs a value/],
    [["ls", "--workflow="], /--workflow needs a value/],
    [["ls", "--tag", "a", "--tag", "b"], /--tag is given once/],
    [["ls", "--limit", "0"], /--limit is a whole number from 1 to 200/],
    [["ls", "--limit", "2.5"], /--limit is a whole number/],
    [["ls", "--limit", "201"], /--limit is a whole number/],
    [["ls", "--metadata", "plan=pro"], /--metadata is a JSON object/],
    [["ls", "r1"], /runs ls: unexpected r1/],
    [["get"], /runs get: give the run's id/],
    [["get", "r1", "r2"], /unexpected r2/],
    [["cancel", "r1", "--reason"], /--reason needs a value/],
    [["retry", "r1", "--reason", "x"], /runs retry: unknown option --reason/],
    [["fork", "r1"], /give the step to start over from with --from-step/],
  ])("refuse %j", (argv, words) => {
    expect(() => parseRunsArgs(argv as string[])).toThrow(words);
  });

  it("are refused by the command as one line and exit code 2, before any database is looked for", () => {
    const repo = path.join(__dirname, "../..");
    const result = spawnSync(
      path.join(repo, "node_modules/.bin/tsx"),
      [path.join(repo, "lib/durable/cli/bin.ts"), "runs", "ls", "--colour"],
      { encoding: "utf8", env: { ...process.env, DATABASE_URL: "" } },
    );
    expect(result.status).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr.trim()).toBe(
      "durable-next runs ls: unknown option --colour (durable-next --help lists the options)",
    );
  });
});

describe("runs ls' table", () => {
  const run = (id: string, workflow: string) => ({
    id,
    workflow,
    version: null,
    status: "failed",
    createdAt: "2026-12-05T00:00:00.000Z",
    updatedAt: "2026-12-05T00:00:01.000Z",
    wakeAt: null,
    waitingFor: null,
    error: null,
    attempts: 1,
    warnings: [],
  });

  it("pads each column to its widest cell, keeps a stored newline on its row, and gives the next page's cursor", () => {
    const text = listText({ runs: [run("a", "checkout"), run("long-id\nx", "w")], nextCursor: "CUR" });
    expect(text.split("\n")).toEqual([
      "ID         WORKFLOW  STATUS  CREATED                   UPDATED",
      "a          checkout  failed  2026-12-05T00:00:00.000Z  2026-12-05T00:00:01.000Z",
      "long-id x  w         failed  2026-12-05T00:00:00.000Z  2026-12-05T00:00:01.000Z",
      "more: the same command with --cursor CUR",
    ]);
    expect(listText({ runs: [], nextCursor: null })).toBe("no runs match");
  });
});
