// `durable-next init` (lib/durable/cli), run from source with tsx on copies of the two app
// fixtures create-next-app writes (tests/fixtures/apps): the files it writes, its exact config
// edits, a second run and --dry-run that write nothing, an app's own file kept, an older init's
// untouched file refreshed, bad usage answered with exit code 2. The package is not installed
// here (tests/unit/pack.test.ts installs it); nothing here runs next.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DURABLE_CRON } from "../../lib/durable/cli/config-edits";
import { editNextConfig } from "../../lib/durable/cli/next-config";
import { ROUTES, routeFile } from "../../lib/durable/cli/route-files";

const REPO = path.join(__dirname, "../..");
const TSX = path.join(REPO, "node_modules/.bin/tsx");
const BIN = path.join(REPO, "lib/durable/cli/bin.ts");
const VERSION = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")).version as string;
const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function scratch(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `durable-init-${prefix}-`));
  dirs.push(dir);
  return dir;
}

function copyFixture(name: "create-next-app-16" | "next-15"): string {
  const dir = scratch(name);
  cpSync(path.join(REPO, "tests/fixtures/apps", name), dir, { recursive: true });
  return dir;
}

/** `durable-next …args` from source: its exit status and what it printed. */
function init(...args: string[]) {
  const result = spawnSync(TSX, [BIN, ...args], { cwd: REPO, encoding: "utf8" });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, output: result.stdout + result.stderr };
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** path → sha256 of every file in the app. */
function snapshot(dir: string, rel = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) Object.assign(out, snapshot(dir, child));
    else out[child] = sha256(readFileSync(path.join(dir, child), "utf8"));
  }
  return out;
}

const ROUTE_PATHS = Object.keys(ROUTES).map((rel) => `app/api/durable/${rel}`);
const repoFile = (rel: string) => readFileSync(path.join(REPO, rel), "utf8");

/** next.config.ts of each fixture after init, exactly. */
const EDITED_CONFIG = {
  "create-next-app-16": `import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  serverExternalPackages: ["@electric-sql/pglite"],
  /* config options here */
  cacheComponents: true,
  partialPrefetching: true,
  turbopack: {
    rules: {
      "*.css": {
        loaders: ["@tailwindcss/turbopack"],
        as: "*.css",
      },
    },
  },
  allowedDevOrigins: ["localhost", "127.0.0.1"],
};

export default nextConfig;
`,
  "next-15": `import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  serverExternalPackages: ["@electric-sql/pglite"],
  /* config options here */
  allowedDevOrigins: ["localhost", "127.0.0.1"],
};

export default nextConfig;
`,
};

/** The reference app's routes init leaves to the app: the MCP server is a decision of its own (docs/guide/mcp.md). */
const NOT_WRITTEN = ["app/api/durable/mcp/route.ts"];

describe("the route files init writes", () => {
  it("are the reference app's route files, one for every route it has but the MCP server", () => {
    const all = readdirSync(path.join(REPO, "app/api/durable"), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith("route.ts"))
      .map((f) => `app/api/durable/${f.split(path.sep).join("/")}`);
    expect(all).toEqual(expect.arrayContaining(NOT_WRITTEN));
    const ours = all.filter((f) => !NOT_WRITTEN.includes(f)).sort();
    expect([...ROUTE_PATHS].sort()).toEqual(ours);
    for (const [rel, name] of Object.entries(ROUTES))
      expect(routeFile(name, "@/app/durable"), rel).toBe(repoFile(`app/api/durable/${rel}`));
    const vercel = JSON.parse(repoFile("vercel.json"));
    expect(vercel.crons).toContainEqual(DURABLE_CRON);
  });
});

describe.each(["create-next-app-16", "next-15"] as const)("init on the %s fixture", (fixture) => {
  let app: string;
  let original: Record<string, string>;
  let first: ReturnType<typeof init>;
  const read = (rel: string) => readFileSync(path.join(app, rel), "utf8");

  beforeAll(() => {
    app = copyFixture(fixture);
    original = snapshot(app);
    first = init("init", app);
  });

  it("writes the routes, the instance, the record and the config edits", () => {
    expect(first.status, first.output).toBe(0);
    // The app's @/ alias reaches app/: the route files are the reference app's, byte for byte.
    for (const rel of ROUTE_PATHS) expect(read(rel), rel).toBe(repoFile(rel));
    const instance = read("app/durable.ts");
    expect(instance).toContain(`import { createAppDurable, type DurableOptions } from "durable-next";`);
    expect(instance).toContain(`import { createDurableRoutes } from "durable-next/next";`);
    expect(instance).toContain("  // register your workflows here\n];");
    expect(instance).toContain("export const routes = createDurableRoutes(getDurable, { maxDuration: 60 });");

    expect(read("next.config.ts")).toBe(EDITED_CONFIG[fixture]);
    expect(JSON.parse(read("vercel.json"))).toEqual({
      $schema: "https://openapi.vercel.sh/vercel.json",
      crons: [{ path: "/api/durable/tick", schedule: "* * * * *" }],
    });
    expect(read(".gitignore")).toBe(
      `${readFileSync(path.join(REPO, "tests/fixtures/apps", fixture, ".gitignore"), "utf8")}` +
        "\n# durable-next: local PGlite data (DATABASE_URL unset)\n.durable/\n",
    );
    expect(read("instrumentation.ts")).toContain(`const { startDevCron } = await import("durable-next/next");`);

    // Every file it created is recorded with the hash of what it wrote; the app's own files are not.
    const record = JSON.parse(read(".durable-next.json"));
    expect(record.version).toBe(VERSION);
    const created = ["app/durable.ts", ...ROUTE_PATHS, "vercel.json", "instrumentation.ts"];
    expect(Object.keys(record.files).sort()).toEqual(created.sort());
    for (const rel of created) expect(record.files[rel], rel).toBe(sha256(read(rel)));
    // Nothing else of the app changed.
    const after = snapshot(app);
    const changed = Object.keys(after).filter((rel) => after[rel] !== original[rel]);
    expect(changed.sort()).toEqual([...created, ".durable-next.json", "next.config.ts", ".gitignore"].sort());
  });

  it("prints the edits, what to install, the secrets and where to register workflows", () => {
    expect(first.output).toMatch(/next\.config\.ts\s+edited: added "@electric-sql\/pglite" to serverExternalPackages/);
    expect(first.output).toMatch(/next\.config\.ts\s+edited: added allowedDevOrigins: \["localhost", "127\.0\.0\.1"\]/);
    expect(first.output).toMatch(/^ {5}npm install durable-next@\S+ zod@4$/m);
    for (const word of ["DURABLE_SECRET=", "CRON_SECRET=", "DURABLE_SIGNAL_SECRET=whsec_", "DATABASE_URL"])
      expect(first.output).toContain(word);
    expect(first.output).toContain("in app/durable.ts, the list that file hands to createAppDurable({ workflows })");
    expect(first.output).toMatch(/record: \.durable-next\.json written/);
  });

  it("changes nothing when run again", () => {
    const before = snapshot(app);
    const again = init("init", app);
    expect(again.status, again.output).toBe(0);
    expect(snapshot(app)).toEqual(before);
    expect(again.output).not.toMatch(/^ +(created|updated|would create) /m);
    expect(again.output).not.toMatch(/ (created|edited): /);
    expect(again.output).toMatch(/already there\s+app\/api\/durable\/tick\/route\.ts/);
    expect(again.output).toMatch(/next\.config\.ts\s+unchanged: already lists @electric-sql\/pglite/);
    expect(again.output).toMatch(/next\.config\.ts\s+unchanged: already allows localhost, 127\.0\.0\.1/);
    expect(again.output).toMatch(/record: \.durable-next\.json unchanged/);
  });
});

describe("init", () => {
  it("writes nothing with --dry-run and prints the plan", () => {
    const app = copyFixture("create-next-app-16");
    const before = snapshot(app);
    const dry = init("init", app, "--dry-run");
    expect(dry.status, dry.output).toBe(0);
    expect(snapshot(app)).toEqual(before);
    expect(dry.output).toContain("(dry run: nothing written)");
    expect(dry.output).toMatch(/would create\s+app\/api\/durable\/runs\/\[id\]\/cancel\/route\.ts/);
    expect(dry.output).toMatch(/next\.config\.ts\s+would be edited: added allowedDevOrigins/);
    expect(dry.output).toMatch(/record: \.durable-next\.json would be written/);
  });

  it("keeps an app's own file at a route path and says so", () => {
    const app = copyFixture("next-15");
    const mine = `export function GET() {\n  return new Response("my own tick");\n}\n`;
    mkdirSync(path.join(app, "app/api/durable/tick"), { recursive: true });
    writeFileSync(path.join(app, "app/api/durable/tick/route.ts"), mine);
    const result = init("init", app);
    expect(result.status, result.output).toBe(0);
    expect(readFileSync(path.join(app, "app/api/durable/tick/route.ts"), "utf8")).toBe(mine);
    expect(result.output).toMatch(
      /kept as is\s+app\/api\/durable\/tick\/route\.ts \(exists and differs: not overwritten\)/,
    );
    const record = JSON.parse(readFileSync(path.join(app, ".durable-next.json"), "utf8"));
    expect(record.files["app/api/durable/tick/route.ts"]).toBeUndefined();
    expect(record.files["app/api/durable/signal/route.ts"]).toBeDefined();
  });

  it("after an upgrade, replaces a file it wrote and the app left alone, and keeps one the app changed", () => {
    const app = copyFixture("next-15");
    expect(init("init", app).status).toBe(0);
    const recordFile = path.join(app, ".durable-next.json");
    const record = JSON.parse(readFileSync(recordFile, "utf8"));
    // As an older version wrote it (its hash recorded), and a route the app edited since.
    const older =
      `import { routes } from "@/app/durable";\n\n` +
      `export const runtime = "nodejs";\nexport const { GET } = routes.runs;\n`;
    writeFileSync(path.join(app, "app/api/durable/runs/route.ts"), older);
    record.files["app/api/durable/runs/route.ts"] = sha256(older);
    writeFileSync(recordFile, JSON.stringify(record));
    const edited = `${readFileSync(path.join(app, "app/api/durable/signal/route.ts"), "utf8")}// mine\n`;
    writeFileSync(path.join(app, "app/api/durable/signal/route.ts"), edited);

    const result = init("init", app);
    expect(result.status, result.output).toBe(0);
    expect(readFileSync(path.join(app, "app/api/durable/runs/route.ts"), "utf8")).toBe(
      repoFile("app/api/durable/runs/route.ts"),
    );
    expect(result.output).toMatch(/updated\s+app\/api\/durable\/runs\/route\.ts \(written by an earlier init/);
    expect(readFileSync(path.join(app, "app/api/durable/signal/route.ts"), "utf8")).toBe(edited);
    expect(result.output).toMatch(/kept as is\s+app\/api\/durable\/signal\/route\.ts/);
    const after = JSON.parse(readFileSync(recordFile, "utf8"));
    expect(after.files["app/api/durable/runs/route.ts"]).toBe(sha256(repoFile("app/api/durable/runs/route.ts")));
    expect(after.files["app/api/durable/signal/route.ts"]).toBe(record.files["app/api/durable/signal/route.ts"]);
  });

  it("follows a src/ layout without an alias, and a JavaScript app", () => {
    const app = scratch("src-js");
    mkdirSync(path.join(app, "src/app"), { recursive: true });
    writeFileSync(path.join(app, "package.json"), JSON.stringify({ dependencies: { next: "^15.3.0", zod: "^4.1.0" } }));
    writeFileSync(path.join(app, ".gitignore"), "/node_modules");
    const result = init("init", app);
    expect(result.status, result.output).toBe(0);
    const read = (rel: string) => readFileSync(path.join(app, rel), "utf8");
    expect(read("src/app/api/durable/runs/[id]/cancel/route.js")).toBe(routeFile("cancel", "../../../../../durable"));
    expect(read("src/app/durable.js")).toContain(`/** @type {import("durable-next").DurableOptions["workflows"]} */`);
    expect(read("src/instrumentation.js")).toContain(`await import("durable-next/next")`);
    expect(read("next.config.mjs")).toContain(`  allowedDevOrigins: ["localhost", "127.0.0.1"],\n`);
    expect(read(".gitignore")).toBe(
      "/node_modules\n\n# durable-next: local PGlite data (DATABASE_URL unset)\n.durable/\n",
    );
    expect(result.output).toMatch(/^ {5}npm install durable-next@\S+$/m); // zod is there
  });

  it("answers bad usage with exit code 2 and the usage", () => {
    const notAnApp = scratch("not-an-app");
    const cases: [string[], RegExp][] = [
      [[], /say what to do/],
      [["start"], /unknown command "start"/],
      [["init", notAnApp, "--force"], /unknown option --force/],
      [["init", notAnApp, notAnApp], /give at most one app directory/],
      [["init", notAnApp], /has no package\.json/],
      [["init", path.join(notAnApp, "missing")], /is not a directory/],
    ];
    for (const [args, message] of cases) {
      const result = init(...args);
      expect(result.status, `${args.join(" ")}: ${result.output}`).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).toContain("usage: durable-next init [dir] [--dry-run]");
    }
    expect(readdirSync(notAnApp)).toEqual([]);
    const help = init("--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("usage: durable-next init");
    expect(init("--version").stdout.trim()).toBe(VERSION);
  }, 120_000);
});

describe("next.config edits", () => {
  const edit = (text: string, name = "next.config.mjs") => {
    const dir = scratch("config");
    writeFileSync(path.join(dir, name), text);
    const changes = editNextConfig(dir, false, false);
    return { text: readFileSync(path.join(dir, name), "utf8"), changes };
  };

  it("edits plain configs in place, keeping what they hold", () => {
    expect(edit("export default {};\n").text).toBe(
      `export default {\n  serverExternalPackages: ["@electric-sql/pglite"],\n` +
        `  allowedDevOrigins: ["localhost", "127.0.0.1"],\n};\n`,
    );
    expect(edit(`module.exports = { reactStrictMode: true };\n`, "next.config.js").text).toBe(
      `module.exports = {\n  serverExternalPackages: ["@electric-sql/pglite"], reactStrictMode: true,\n` +
        `  allowedDevOrigins: ["localhost", "127.0.0.1"],\n};\n`,
    );
    // Lists that exist get what they lack; a regex and a nested object do not confuse the brace count.
    const own = [
      "const nextConfig = {",
      `  serverExternalPackages: ["sharp"],`,
      `  allowedDevOrigins: ["localhost", "dev.example.com"],`,
      "  logging: { incomingRequests: { ignore: [/^\\/api\\/x{2}/] } },",
      "  images: { remotePatterns: [{ hostname: '*.example.com' }] } // no trailing comma",
      "};",
      "export default nextConfig;",
      "",
    ].join("\n");
    const edited = edit(own);
    expect(edited.text).toBe(
      own
        .replace(`["sharp"]`, `["@electric-sql/pglite", "sharp"]`)
        .replace(`["localhost", "dev.example.com"]`, `["127.0.0.1", "localhost", "dev.example.com"]`),
    );
    expect(edited.changes.map((c) => c.outcome)).toEqual(["edited", "edited"]);
    // The end of the object, with the comma its last property lacked.
    const noComma = edit(
      "const nextConfig = {\n  images: { unoptimized: true } // note\n};\nexport default nextConfig;\n",
    );
    expect(noComma.text).toBe(
      `const nextConfig = {\n  serverExternalPackages: ["@electric-sql/pglite"],\n` +
        "  images: { unoptimized: true }, // note\n" +
        `  allowedDevOrigins: ["localhost", "127.0.0.1"],\n};\nexport default nextConfig;\n`,
    );
  });

  it("leaves a config that is not plain alone and prints the exact lines", () => {
    const wrapped = `import withThing from "thing";\nexport default withThing({ reactStrictMode: true });\n`;
    const { text, changes } = edit(wrapped);
    expect(text).toBe(wrapped);
    expect(changes.map((c) => c.outcome)).toEqual(["manual", "manual"]);
    expect(changes[0]!.note).toContain(`serverExternalPackages: ["@electric-sql/pglite"],`);
    expect(changes[1]!.note).toContain(`allowedDevOrigins: ["localhost", "127.0.0.1"],`);
  });
});
