// The mcp wing (docs/layout.md, "The mcp/ wing"): only its entry, lib/durable/mcp.ts, imports
// lib/durable/mcp/, and only mcp/ imports @modelcontextprotocol/sdk, so an app that does not
// import `durable-next/mcp` never loads the SDK.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { importSpecifiers } from "../../scripts/add-to-app/imports";

const LIB = path.join(__dirname, "../../lib/durable");

const sources = (rel = ""): string[] =>
  readdirSync(path.join(LIB, rel), { withFileTypes: true }).flatMap((entry) => {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return sources(child);
    return /\.tsx?$/.test(entry.name) ? [child] : [];
  });

const specifiersOf = (file: string) =>
  importSpecifiers(readFileSync(path.join(LIB, file), "utf8"), file).map((s) => s.spec);
const inWing = (file: string) => file === "mcp.ts" || file.startsWith("mcp/");

describe("the mcp wing", () => {
  it("is imported only by its entry, and only it imports the MCP SDK", () => {
    const files = sources();
    expect(files.filter(inWing).length).toBeGreaterThan(5);
    const offending = files
      .filter((file) => !inWing(file))
      .flatMap((file) =>
        specifiersOf(file)
          .filter((spec) => spec.startsWith("@modelcontextprotocol/") || /(^|\/)mcp(\/|$)/.test(spec))
          .map((spec) => `${file} imports ${spec}`),
      );
    expect(offending).toEqual([]);
    // The check sees imports: the wing does import the SDK, and the entry the wing.
    expect(specifiersOf("mcp/mcp-route.ts")).toContain("@modelcontextprotocol/sdk/server/index.js");
    expect(specifiersOf("mcp.ts")).toContain("./mcp/mcp-route");
  });
});
