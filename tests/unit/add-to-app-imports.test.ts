// add-to-app tells the other app which npm packages to install from the imports of the files it
// copies. Those are read by TypeScript's parser: a string, a comment or a SQL fragment that looks
// like `from "x"` is not an import (a regex once advised installing "1ms" and "running").
import path from "node:path";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { importsOf, OPTIONAL_PACKAGES, packagesUsed, planFiles } from "../../scripts/add-to-app/plan";

const REPO = path.join(__dirname, "../..");

describe("add-to-app's import scan", () => {
  it("finds every kind of import and nothing in strings, templates or comments", () => {
    const source = [
      'import { a } from "pkg-a";',
      'import type { B } from "pkg-b/sub";',
      'export { c } from "./c";',
      'export * from "@scope/d";',
      'import "side-effect";',
      'import e = require("pkg-e");',
      'const f = await import("pkg-f");',
      'type G = import("pkg-g").G;',
      'throw new Error(`a duration is a number of ms, or a string from "1ms" to "7d"`);',
      "const q = sql`select 1 where status is distinct from 'running'`;",
      'const s = "import x from \\"not-a-package\\"";',
      '// import { h } from "commented-out";',
      '/** @example import { i } from "jsdoc-example"; */',
    ].join("\n");
    expect(importsOf(source, "probe.ts")).toEqual([
      "pkg-a",
      "pkg-b/sub",
      "./c",
      "@scope/d",
      "side-effect",
      "pkg-e",
      "pkg-f",
      "pkg-g",
    ]);
    expect(importsOf("select 1 from 'running';", "0001_durable.sql")).toEqual([]);
  });

  it("advises only packages this repository depends on, for the files it copies today", () => {
    const ours = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    const used = packagesUsed(planFiles(REPO, { base: "" }));
    expect(used).toContain("kysely");
    expect(used).not.toContain("1ms");
    expect(used).not.toContain("running");
    for (const name of used.filter((n) => !OPTIONAL_PACKAGES.includes(n)))
      expect(ours.dependencies, name).toHaveProperty([name]);
  });

  it("leaves out the files of an optional package the app does not list, and only those", () => {
    const all = planFiles(REPO, { base: "" }).map((f) => f.dest);
    // The MCP wing's files that import the SDK, and its entry (mcp/types.ts imports no package).
    const mcpFiles = [
      "lib/durable/mcp/mcp-errors.ts",
      "lib/durable/mcp/mcp-route.ts",
      "lib/durable/mcp/operator-tools.ts",
      "lib/durable/mcp/run-task.ts",
      "lib/durable/mcp/task-methods.ts",
      "lib/durable/mcp/workflow-tools.ts",
      "lib/durable/mcp.ts",
    ];
    const withoutDrizzle = planFiles(REPO, { base: "" }, new Set(["next", "react"]));
    expect(withoutDrizzle.leftOut).toEqual([
      "lib/durable/drivers/drizzle-executor.ts",
      "lib/durable/drizzle.ts",
      ...mcpFiles,
    ]);
    expect(packagesUsed(withoutDrizzle)).not.toContain("drizzle-orm");
    expect(packagesUsed(withoutDrizzle)).not.toContain("@modelcontextprotocol/sdk");
    expect(all.filter((f) => !withoutDrizzle.some((w) => w.dest === f)).sort()).toEqual(
      [...withoutDrizzle.leftOut!].sort(),
    );
    const withDrizzle = planFiles(REPO, { base: "" }, new Set(["next", "drizzle-orm"]));
    expect(withDrizzle.leftOut).toEqual(mcpFiles);
    const withBoth = planFiles(REPO, { base: "" }, new Set(["next", "drizzle-orm", "@modelcontextprotocol/sdk"]));
    expect(withBoth.map((f) => f.dest)).toEqual(all);
  });
});
