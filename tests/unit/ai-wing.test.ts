// The ai wing (docs/layout.md, "The ai/ wing"): the core never imports lib/durable/ai/, only the
// entry points do; the names the old entries still export are the wing's own, not copies; and the
// wing's client entry bundles for the browser without any server code.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import * as core from "@/lib/durable";
import * as ai from "@/lib/durable/ai";
import * as aiReact from "@/lib/durable/ai-react";
import * as next from "@/lib/durable/next";
import * as react from "@/lib/durable/react";
import { importSpecifiers } from "../../scripts/add-to-app/imports";

const REPO = path.join(__dirname, "../..");
const LIB = path.join(REPO, "lib/durable");
/** The entry points: they may import the wing (the old ones for their deprecated names). */
const ENTRIES = ["index.ts", "next.ts", "react.ts", "testing.ts", "ai.ts", "ai-react.ts"];

/** Every .ts file under lib/durable, relative to it. */
const sources = (rel = ""): string[] =>
  readdirSync(path.join(LIB, rel), { withFileTypes: true }).flatMap((entry) => {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return sources(child);
    return entry.name.endsWith(".ts") ? [child] : [];
  });

/** The files of lib/durable that `file` imports (static, type-only, dynamic, augmented), relative to lib/durable. */
function importsOf(file: string): string[] {
  const specs = importSpecifiers(readFileSync(path.join(LIB, file), "utf8"), file).map((s) => s.spec);
  return specs
    .filter((spec) => spec.startsWith("."))
    .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)));
}

const inWing = (file: string) => file === "ai" || file.startsWith("ai/");

describe("the ai wing", () => {
  it("is imported by no file of the core, only by the entry points", () => {
    const files = sources();
    expect(files.filter(inWing).length).toBeGreaterThan(15);
    const offending = files
      .filter((file) => !inWing(file) && !ENTRIES.includes(file))
      .flatMap((file) =>
        importsOf(file)
          .filter(inWing)
          .map((target) => `${file} imports ${target}`),
      );
    expect(offending).toEqual([]);
    // The check sees imports: the entries that keep the old names do load the wing.
    expect(importsOf("index.ts")).toContain("ai/wing");
    expect(importsOf("next.ts")).toContain("ai/http/chat");
  });

  it("registers with the core from one file, ai/wing.ts", () => {
    const naming = sources().filter(
      (file) => inWing(file) && importsOf(file).includes("engine/wings") && /registerWing\(/.test(read(file)),
    );
    expect(naming).toEqual(["ai/wing.ts"]);
  });

  it("exports from the old entries the very functions of the new ones", () => {
    const shared = (a: object, b: object) => Object.keys(a).filter((name) => Object.hasOwn(b, name));
    const fromIndex = shared(ai, core);
    expect(fromIndex.sort()).toEqual(
      [
        "TOOL_APPROVAL_SIGNAL",
        "TURN_END_PART",
        "cancelChatTurn",
        "chatTurnId",
        "chatTurnInput",
        "loadChat",
        "readActiveChatTurn",
        "startChatTurn",
        "toolStep",
        "turnEndOf",
        "txTool",
        "withTurnEnd",
      ].sort(),
    );
    for (const name of fromIndex) expect((core as any)[name], name).toBe((ai as any)[name]);
    expect(next.createChatRoutes).toBe(ai.createChatRoutes);
    expect(shared(aiReact, react).sort()).toEqual(Object.keys(aiReact).sort());
    for (const name of Object.keys(aiReact)) expect((react as any)[name], name).toBe((aiReact as any)[name]);
  });

  it("bundles its client entry, and react.ts, for the browser with no server code", async () => {
    const inputsOf = async (entry: string) => {
      const result = await build({
        entryPoints: [path.join(LIB, entry)],
        bundle: true,
        write: false,
        metafile: true,
        platform: "browser",
        format: "esm",
        logLevel: "silent",
        external: ["react", "ai", "@ai-sdk/*"],
      });
      return Object.keys(result.metafile.inputs).sort();
    };
    expect(await inputsOf("ai-react.ts")).toEqual([
      "lib/durable/ai-react.ts",
      "lib/durable/ai/react/durable-chat-transport.ts",
      "lib/durable/ai/turn-end.ts",
      "lib/durable/react/sse-parser.ts",
    ]);
    const fromReact = await inputsOf("react.ts");
    expect(fromReact).toContain("lib/durable/ai/react/durable-chat-transport.ts");
    expect(
      fromReact.filter((file) => !/^lib\/durable\/(react\.ts|react\/|ai\/react\/|ai\/turn-end\.ts)/.test(file)),
    ).toEqual([]);
  });
});

const read = (file: string) => readFileSync(path.join(LIB, file), "utf8");
