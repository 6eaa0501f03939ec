// `npm run pack` (scripts/pack.ts), run once into a temp dir: the tarball holds every entry point
// with its .d.ts, the CLI, the SQL files and nothing of the app or the tests; its package.json
// depends on exactly what the compiled code imports; and installed with npm into an empty project
// (the registry, npm's cache first) every entry imports under plain Node and a consumer
// type-checks under `moduleResolution` bundler and nodenext (docs/guide/installing.md).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importsOf } from "../../scripts/add-to-app/plan";
import { packageName } from "../../scripts/pack/specifiers";

const REPO = path.join(__dirname, "../..");
const root = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8"));
const work = mkdtempSync(path.join(os.tmpdir(), "durable-pack-"));
const out = path.join(work, "out");
const stage = path.join(out, "package");
const consumer = path.join(work, "consumer");
let tarball = "";
let files: string[] = [];
let manifest: Record<string, any> = {};

/** Runs a command; throws with its output when it fails. */
function sh(command: string, args: string[], cwd: string, timeout = 240_000) {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", timeout });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(" ")} exited with ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Every file of lib/durable the package compiles, without its extension. */
const sources = (rel = ""): string[] =>
  readdirSync(path.join(REPO, "lib/durable", rel), { withFileTypes: true }).flatMap((entry) => {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return sources(child);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [child.replace(/\.tsx?$/, "")] : [];
  });

beforeAll(() => {
  const printed = sh(path.join(REPO, "node_modules/.bin/tsx"), ["scripts/pack.ts", "--out", out], REPO);
  tarball = printed.trim().split("\n")[0]!;
  files = sh("tar", ["tzf", tarball], work)
    .trim()
    .split("\n")
    .map((f) => f.replace(/^package\//, ""));
  manifest = JSON.parse(readFileSync(path.join(stage, "package.json"), "utf8"));
}, 180_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("npm run pack", () => {
  it("prints the tarball and its size", () => {
    expect(tarball).toBe(path.join(out, `durable-next-${root.version}.tgz`));
    expect(files.length).toBeGreaterThan(100);
  });

  it("packs every entry with its types, the CLI, the SQL, and nothing of the app or the tests", () => {
    const listed = new Set(files);
    for (const [subpath, target] of Object.entries(manifest.exports as Record<string, any>)) {
      if (subpath === "./package.json") continue;
      expect(listed.has(target.default.slice(2)), `${subpath} → ${target.default}`).toBe(true);
      expect(listed.has(target.types.slice(2)), `${subpath} → ${target.types}`).toBe(true);
    }
    expect(Object.keys(manifest.exports).sort()).toEqual(
      [
        ".",
        "./next",
        "./react",
        "./testing",
        "./drizzle",
        "./prisma",
        "./ai",
        "./ai/react",
        "./mcp",
        "./package.json",
      ].sort(),
    );
    for (const file of sources()) {
      expect(listed.has(`${file}.js`), file).toBe(true);
      expect(listed.has(`${file}.d.ts`), file).toBe(true);
    }
    for (const dir of ["store/migrations", "store/sql/functions"]) {
      const sql = readdirSync(path.join(REPO, "lib/durable", dir)).filter((f) => f.endsWith(".sql"));
      expect(sql.length, dir).toBeGreaterThan(0);
      for (const name of sql) expect(listed.has(`${dir}/${name}`), `${dir}/${name}`).toBe(true);
    }
    expect(listed.has("store/migrations.generated.js")).toBe(true);
    expect(listed.has(manifest.bin["durable-next"].slice(2))).toBe(true);
    for (const file of ["package.json", "README.md"]) expect(listed.has(file), file).toBe(true);
    expect(files.filter((f) => /^(app|tests|scripts|db|docs|node_modules)\//.test(f))).toEqual([]);
    expect(files.filter((f) => /\.test\./.test(f) || (f.endsWith(".ts") && !f.endsWith(".d.ts")))).toEqual([]);
  });

  it("rewrites every relative import to its file and keeps the client directives", () => {
    for (const file of files.filter((f) => /\.(js|d\.ts)$/.test(f))) {
      const specs = importsOf(readFileSync(path.join(stage, file), "utf8"), file);
      for (const spec of specs.filter((s) => s.startsWith(".")))
        expect(spec, `${file} imports "${spec}"`).toMatch(/\.js$/);
      expect(
        specs.filter((s) => s.startsWith("@/")),
        file,
      ).toEqual([]);
    }
    const client = sources().filter((file) =>
      readFileSync(path.join(REPO, "lib/durable", `${file}.ts`), "utf8").startsWith('"use client";'),
    );
    expect(client).toEqual(expect.arrayContaining(["react", "ai-react"]));
    for (const file of client)
      expect(readFileSync(path.join(stage, `${file}.js`), "utf8").startsWith('"use client";'), file).toBe(true);
    expect(readFileSync(path.join(stage, "cli/bin.js"), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
  });

  it("depends on exactly the packages the compiled code imports, at the root's versions", () => {
    const imported = new Set<string>();
    for (const file of files.filter((f) => f.endsWith(".js")))
      for (const spec of importsOf(readFileSync(path.join(stage, file), "utf8"), file)) {
        const name = spec.startsWith(".") ? null : packageName(spec);
        if (name) imported.add(name);
      }
    const peers = Object.keys(manifest.peerDependencies);
    expect(peers.sort()).toEqual([
      "@modelcontextprotocol/sdk",
      "@prisma/client",
      "ai",
      "drizzle-orm",
      "next",
      "react",
      "zod",
    ]);
    const dependencies = Object.keys(manifest.dependencies);
    expect(dependencies.sort()).toEqual([...imported].filter((name) => !peers.includes(name)).sort());
    for (const name of dependencies) expect(manifest.dependencies[name], name).toBe(`^${root.dependencies[name]}`);
    for (const name of imported) expect([...dependencies, ...peers], name).toContain(name);
    // The core entry loads zod; the others only where an entry or a step needs them.
    expect(manifest.peerDependenciesMeta).toEqual({
      next: { optional: true },
      react: { optional: true },
      ai: { optional: true },
      "drizzle-orm": { optional: true },
      "@prisma/client": { optional: true },
      "@modelcontextprotocol/sdk": { optional: true },
    });
    expect(manifest).toMatchObject({
      name: "durable-next",
      version: root.version,
      type: "module",
      engines: { node: ">=20.9" },
      bin: { "durable-next": "./cli/bin.js" },
    });
  });

  it("installs with npm, imports under plain Node, and type-checks under bundler and nodenext", () => {
    mkdirSync(consumer);
    writeFileSync(
      path.join(consumer, "package.json"),
      JSON.stringify({ name: "consumer", private: true, type: "module" }),
    );
    const pin = (name: string) => `${name}@${root.dependencies[name] ?? root.devDependencies[name]}`;
    sh(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        tarball,
        ...["react", "ai", "drizzle-orm", "@types/node"].map(pin),
      ],
      consumer,
    );
    writeFileSync(path.join(consumer, "probe.mjs"), PROBE);
    expect(JSON.parse(sh("node", ["probe.mjs"], consumer))).toEqual({
      "durable-next": expect.arrayContaining(["createAppDurable", "createDurable", "defineWorkflow", "connect"]),
      "durable-next/next": expect.arrayContaining(["createDurableRoutes", "startDevCron"]),
      "durable-next/react": expect.arrayContaining(["useDurableRun", "useDurableStream"]),
      "durable-next/testing": expect.arrayContaining(["createTestDurable"]),
      "durable-next/drizzle": expect.any(Array),
      "durable-next/prisma": ["pgliteOf", "prismaTx"],
      "durable-next/ai": expect.arrayContaining(["createChatRoutes", "toolApprovals", "txTool", "loadChat"]),
      "durable-next/ai/react": expect.arrayContaining(["DurableChatTransport", "turnEndOf"]),
    });
    expect(sh(path.join(consumer, "node_modules/.bin/durable-next"), ["--version"], consumer).trim()).toBe(
      root.version,
    );
    // migrate loads the package's entry only when run: it resolves inside the installed package.
    const migrate = spawnSync(path.join(consumer, "node_modules/.bin/durable-next"), ["migrate"], {
      cwd: consumer,
      encoding: "utf8",
      env: { ...process.env, DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" },
    });
    expect(migrate.status, migrate.stderr).toBe(1);
    expect(migrate.stderr).toMatch(/could not migrate postgres:\/\/nobody@127\.0\.0\.1:1\/none: .*ECONNREFUSED/);

    writeFileSync(path.join(consumer, "consumer.ts"), CONSUMER);
    for (const [module, resolution] of [
      ["esnext", "bundler"],
      ["nodenext", "nodenext"],
    ]) {
      const config = `tsconfig.${resolution}.json`;
      writeFileSync(path.join(consumer, config), tsconfig(module!, resolution!));
      const result = spawnSync(path.join(REPO, "node_modules/.bin/tsc"), ["-p", config], {
        cwd: consumer,
        encoding: "utf8",
      });
      // Other packages' .d.ts have errors of their own (skipLibCheck is off to check ours): only
      // the consumer and durable-next's own declarations must have none.
      const ours = result.stdout
        .split("\n")
        .filter((line) => /^(consumer\.ts|node_modules\/durable-next\/)/.test(line));
      expect(ours, `${resolution}:\n${result.stdout}`).toEqual([]);
    }
  }, 400_000);
});

const PROBE = `const names = {};
const subpaths = ["", "/next", "/react", "/testing", "/drizzle", "/prisma", "/ai", "/ai/react"];
const entries = subpaths.map((sub) => "durable-next" + sub);
for (const entry of entries) names[entry] = Object.keys(await import(entry));
console.log(JSON.stringify(names));
`;

const tsconfig = (module: string, moduleResolution: string) =>
  JSON.stringify({
    compilerOptions: {
      target: "ES2022",
      lib: ["dom", "ES2022"],
      module,
      moduleResolution,
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      types: ["node"],
    },
    files: ["consumer.ts"],
  });

/** A user's file over every entry; the expect-error line fails if the types came out as any. */
const CONSUMER = `import { createAppDurable, defineWorkflow, type RunStatus } from "durable-next";
import { createDurableRoutes, startDevCron } from "durable-next/next";
import { useDurableRun } from "durable-next/react";
import { createTestDurable } from "durable-next/testing";
import * as drizzle from "durable-next/drizzle";
import { prismaTx } from "durable-next/prisma";
import { type AiTextResult, toolApprovals } from "durable-next/ai";
import { DurableChatTransport } from "durable-next/ai/react";
import { z } from "zod";

export const double = defineWorkflow({
  name: "double",
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    const doubled: number = await ctx.step.run("double", () => input.n * 2);
    await ctx.step.sleep("nap", "1s");
    return { doubled };
  },
});
export const getDurable = createAppDurable({ workflows: [double] });
export const routes = createDurableRoutes(getDurable, { maxDuration: 60 });
export const hook: typeof useDurableRun = useDurableRun;
export const cron: typeof startDevCron = startDevCron;
export const drizzleEntry: typeof drizzle = drizzle;
// prismaTx imports nothing of Prisma: any client with an interactive $transaction, its tx typed through.
type Tx = {
  $queryRawUnsafe(q: string, ...v: unknown[]): Promise<unknown>;
  order: { create(a: { id: string }): Promise<{ at: Date }> };
};
declare const prisma: { $transaction<R>(fn: (tx: Tx) => Promise<R>, options?: { timeout?: number }): Promise<R> };
export const placed = defineWorkflow({
  name: "placed",
  input: z.object({}),
  async run(ctx) {
    const order = await prismaTx(ctx, "order", prisma, (tx, s) => tx.order.create({ id: s.externalKey }));
    const at: string = order.at;
    return { at };
  },
});
// ctx.step.ai and durable.toolApprovals come from the ai wing's augmentations, in its .d.ts files.
export const ask = defineWorkflow({
  name: "ask",
  input: z.object({ q: z.string() }),
  async run(ctx, input) {
    const answer: AiTextResult = await ctx.step.ai.generateText("ask", { model: "openai/gpt-5", prompt: input.q });
    return { text: answer.text };
  },
});
export const pending = async () => toolApprovals(await getDurable(), "run-1");
export const pendingAsBefore = async () => (await getDurable()).toolApprovals("run-1");
export const transport = new DurableChatTransport({ api: "/api/chat" });
export async function check(): Promise<RunStatus> {
  const durable = await createTestDurable({ workflows: [double] });
  return durable.run(double, { n: 1 });
}
// @ts-expect-error n is a number
export const wrong = () => createTestDurable({ workflows: [double] }).then((d) => d.run(double, { n: "1" }));
`;
