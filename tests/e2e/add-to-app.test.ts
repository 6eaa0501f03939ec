// `npm run add-to-app -- <dir>` on a fresh create-next-app-style app: the copy (one folder,
// lib/durable, plus the route files and the instance) builds with `next build`, serves under
// `next start`, and runs a workflow the app registers through the copied routes. A second run
// changes nothing, no file the app had is overwritten, and nothing is written under its db/.
// `--update` brings a copy one version behind up to date by the manifest, keeping what the app
// changed (and printing the diff); an app copied before manifests gets one.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { importsOf, planFiles } from "../../scripts/add-to-app/plan";
import { DurableClient, makeSecrets } from "./helpers/durable-client";
import { addToApp, writeMinimalApp } from "./helpers/fresh-app";
import { buildApp, REPO_ROOT, startNext, type NextServer } from "./helpers/next-server";

// Each case runs add-to-app (and npm, tsc) in a child process: on a loaded machine one takes
// longer than the default 30 s, which a synchronous test can only be failed for afterwards.
vi.setConfig({ testTimeout: 120_000 });

const ours = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
const app = mkdtempSync(path.join(os.tmpdir(), "durable-e2e-add-to-app-"));

const MY_TICK_ROUTE = `// The app's own route at the path the toolkit would use: add-to-app must leave it alone.
export function GET() {
  return new Response("my own tick");
}
`;
const MY_VERCEL_JSON = `{
    "regions": ["fra1"],
    "crons": [{ "path": "/api/cleanup", "schedule": "0 4 * * *" }]
}
`;

/** The minimal app with the app's own files that add-to-app must leave alone. */
const writeMyApp = (dir: string, { install = true } = {}) =>
  writeMinimalApp(dir, {
    install,
    files: { "vercel.json": MY_VERCEL_JSON, "app/api/durable/tick/route.ts": MY_TICK_ROUTE },
  });

/** path → sha256 of every file in the app, except what builds and installs make. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (
        ["node_modules", ".next", ".durable"].includes(entry.name) ||
        entry.name === "next-env.d.ts" ||
        entry.name.endsWith(".tsbuildinfo")
      )
        continue;
      if (entry.isDirectory()) walk(child);
      else
        out[child] = createHash("sha256")
          .update(readFileSync(path.join(dir, child)))
          .digest("hex");
    }
  };
  walk("");
  return out;
}

const PING_WORKFLOW = `import { z } from "zod";
import { defineWorkflow } from "../../lib/durable";

export const ping = defineWorkflow({
  name: "ping",
  input: z.object({ n: z.number().int() }),
  async run(ctx, input) {
    const doubled = await ctx.step.run("double", () => input.n * 2);
    await ctx.step.sleep("nap", "100ms");
    return { doubled, waited: true };
  },
});
`;

const read = (rel: string) => readFileSync(path.join(app, rel), "utf8");
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const MANIFEST = "lib/durable/.add-to-app.json";
type Manifest = { toolkit: { version: string; commit?: string }; files: Record<string, string> };

/** A scratch app (no node_modules: nothing here builds it) removed after `body`. */
function withApp(prefix: string, body: (dir: string, inDir: (rel: string) => string) => void) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `durable-e2e-${prefix}-`));
  try {
    writeMyApp(dir, { install: false });
    body(dir, (rel) => readFileSync(path.join(dir, rel), "utf8"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The summary line of one group of `--update`: its counts by name ("written" → 1, …). */
function updateCounts(output: string, label: string): Record<string, number> {
  const line = output.split("\n").find((l) => l.trimStart().startsWith(`${label} `));
  if (!line) throw new Error(`no summary line for ${label} in:\n${output}`);
  return Object.fromEntries(
    [...line.matchAll(/(\d+) ([a-z ()]+?)(?=,|$)/g)].map((m) => [m[2]!.replace(/^to /, ""), Number(m[1])]),
  );
}

describe("add-to-app", () => {
  let server: NextServer | undefined;
  let first: { status: number | null; output: string };
  const secrets = makeSecrets();

  beforeAll(() => {
    writeMyApp(app);
    first = addToApp(app);
  });

  afterAll(async () => {
    await server?.stop();
    rmSync(app, { recursive: true, force: true });
  });

  afterEach((context) => {
    if (context.task.result?.state === "fail" && server)
      console.log(`next start output:\n${server.output().slice(-4000)}`);
  });

  it("writes nothing with --dry-run", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "durable-e2e-dry-run-"));
    try {
      writeFileSync(path.join(dir, "package.json"), JSON.stringify({ dependencies: { next: "16.0.0" } }));
      const dry = addToApp(dir, "--dry-run");
      expect(dry.status, dry.output).toBe(0);
      expect(dry.output).toMatch(/would create\s+app\/durable\.ts/);
      expect(dry.output).toMatch(/manifest: lib\/durable\/\.add-to-app\.json would be written/);
      expect(readdirSync(dir)).toEqual(["package.json"]);
      const dryUpdate = addToApp(dir, "--update", "--dry-run");
      expect(dryUpdate.status, dryUpdate.output).toBe(0);
      expect(updateCounts(dryUpdate.output, "lib/durable/")).toMatchObject({ write: expect.any(Number), replace: 0 });
      expect(dryUpdate.output).toMatch(/would write\s+app\/durable\.ts/);
      expect(readdirSync(dir)).toEqual(["package.json"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("follows a src/ layout and edits a plain next.config.mjs list", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "durable-e2e-src-"));
    try {
      mkdirSync(path.join(dir, "src", "app"), { recursive: true });
      writeFileSync(
        path.join(dir, "package.json"),
        JSON.stringify({ dependencies: { next: "^16.1.0", zod: "^3.25.0", kysely: "^0.27.0" } }),
      );
      writeFileSync(path.join(dir, "tsconfig.json"), "{}");
      writeFileSync(path.join(dir, "next.config.mjs"), `export default {\n  serverExternalPackages: ["sharp"],\n};\n`);
      const result = addToApp(dir);
      expect(result.status, result.output).toBe(0);
      const inDir = (rel: string) => readFileSync(path.join(dir, rel), "utf8");
      expect(inDir("src/lib/durable/index.ts")).toBe(
        readFileSync(path.join(REPO_ROOT, "lib/durable/index.ts"), "utf8"),
      );
      for (const rel of ["lib/durable/store/tables.ts", "lib/durable/store/migrations/0001_durable.sql"])
        expect(inDir(`src/${rel}`), rel).toBe(readFileSync(path.join(REPO_ROOT, rel), "utf8"));
      expect(existsSync(path.join(dir, "src/db"))).toBe(false);
      expect(existsSync(path.join(dir, "db"))).toBe(false);
      const manifest: Manifest = JSON.parse(inDir(`src/${MANIFEST}`));
      expect(manifest.files["src/lib/durable/index.ts"]).toBe(sha256(inDir("src/lib/durable/index.ts")));
      expect(manifest.files["src/app/durable.ts"]).toBe(sha256(inDir("src/app/durable.ts")));
      expect(inDir("src/app/api/durable/runs/route.ts")).toContain(`from "../../../durable"`);
      expect(inDir("src/app/durable.ts")).toContain(`from "../lib/durable"`);
      expect(inDir("next.config.mjs")).toBe(
        `export default {\n  serverExternalPackages: ["@electric-sql/pglite", "sharp"],\n` +
          `  allowedDevOrigins: ["localhost", "127.0.0.1"],\n};\n`,
      );
      expect(JSON.parse(inDir("vercel.json")).crons).toEqual([{ path: "/api/durable/tick", schedule: "* * * * *" }]);
      expect(result.output).toMatch(/\.gitignore\s+TO DO: does not exist/);
      // Next looks for instrumentation next to app/: under src/ here.
      expect(inDir("src/instrumentation.ts")).toContain(`await import("./lib/durable/next")`);
      // Versions that differ in a way that matters are pointed out, not silently accepted.
      expect(result.output).toMatch(/Check: zod \^3\.25\.0: the toolkit is tested with 4\./);
      expect(result.output).toMatch(/Check: kysely \^0\.27\.0: the toolkit is tested with 0\.28\./);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("leaves an app's own instrumentation.ts alone and prints the lines that start the local cron", () => {
    withApp("instrumentation", (dir, inDir) => {
      const own = `export async function register() {\n  await import("./otel");\n}\n`;
      writeFileSync(path.join(dir, "instrumentation.ts"), own);
      const result = addToApp(dir);
      expect(result.status, result.output).toBe(0);
      expect(inDir("instrumentation.ts")).toBe(own);
      expect(result.output).toMatch(/instrumentation\.ts\s+TO DO: is your app's: so that runs tick under next dev/);
      expect(result.output).toContain(`const { startDevCron } = await import("./lib/durable/next");`);
      expect(result.output).toContain("(instrumentation.ts: at each run's wake time, at least every 5 s)");
    });
  });

  it("copies the toolkit, keeps the app's own files, and merges its config", () => {
    expect(first.status, first.output).toBe(0);
    // The toolkit, byte for byte.
    for (const rel of [
      "lib/durable/index.ts",
      "lib/durable/next.ts",
      "lib/durable/store/tables.ts",
      "lib/durable/store/migrations.generated.ts",
      "lib/durable/store/migrations/0001_durable.sql",
    ]) {
      expect(read(rel), rel).toBe(readFileSync(path.join(REPO_ROOT, rel), "utf8"));
    }
    // One folder for the toolkit: the app's db/ is not written, and our tests stay here.
    expect(existsSync(path.join(app, "db"))).toBe(false);
    expect(Object.keys(snapshot(app)).filter((f) => f.endsWith(".test.ts"))).toEqual([]);
    expect(first.output).toMatch(/lib\/durable\/: \d+ created\n/);
    expect(first.output).not.toContain("db/");

    // The manifest: every file add-to-app wrote, with the hash of what it wrote, and the version.
    const manifest: Manifest = JSON.parse(read(MANIFEST));
    expect(manifest.toolkit.version).toBe(ours.version);
    // The minimal app lists no drizzle-orm: the Drizzle entry and its executor are left out.
    const theirs = JSON.parse(read("package.json"));
    const appPackages = new Set(Object.keys({ ...theirs.dependencies, ...theirs.devDependencies }));
    const wrote = planFiles(REPO_ROOT, { base: "" }, appPackages)
      .map((f) => f.dest)
      .filter((dest) => dest !== "app/api/durable/tick/route.ts"); // the app's own, not written
    expect(Object.keys(manifest.files).sort()).toEqual(wrote.sort());
    for (const rel of wrote) expect(manifest.files[rel], rel).toBe(sha256(read(rel)));
    // Route files point at the app's instance by relative paths, not at our `@/` alias.
    expect(read("app/api/durable/runs/[id]/cancel/route.ts")).toContain(`from "../../../../../durable"`);
    expect(read("app/api/durable/signal/route.ts")).toContain(`from "../../../durable"`);
    expect(read("app/durable.ts")).toContain(`from "../lib/durable"`);
    for (const rel of Object.keys(snapshot(app)).filter((f) => /\.(ts|tsx)$/.test(f))) {
      expect(
        importsOf(read(rel), rel).filter((spec) => spec.startsWith("@/")),
        rel,
      ).toEqual([]);
    }

    // The app's own route at our path is left alone, and the output says so.
    expect(read("app/api/durable/tick/route.ts")).toBe(MY_TICK_ROUTE);
    expect(first.output).toMatch(
      /kept as is\s+app\/api\/durable\/tick\/route\.ts \(exists and differs: not overwritten\)/,
    );

    // vercel.json: our cron added; its own cron, its other keys and its indentation stay.
    const vercel = read("vercel.json");
    expect(JSON.parse(vercel)).toEqual({
      regions: ["fra1"],
      crons: [
        { path: "/api/cleanup", schedule: "0 4 * * *" },
        { path: "/api/durable/tick", schedule: "* * * * *" },
      ],
    });
    expect(vercel).toMatch(/^ {4}"regions"/m);
    expect(read("next.config.ts")).toContain(
      "const nextConfig: NextConfig = {\n" +
        `  serverExternalPackages: ["@electric-sql/pglite"],\n  /* config options here */`,
    );
    expect(read(".gitignore")).toMatch(/^\.durable\/$/m);

    // What to do next: packages at our pinned versions, the secrets, the database, the registry.
    // Pinned exactly (-E), so the app's package.json records these versions rather than caret ranges.
    const install = /npm install -E (@electric-sql\S+ .*)/.exec(first.output)?.[1]?.split(" ") ?? [];
    expect(install.sort()).toEqual(
      [
        "@electric-sql/pglite",
        "@neondatabase/serverless",
        "@opentelemetry/api",
        "@vercel/functions",
        "ai",
        "croner",
        "kysely",
        "pg",
        "ws",
        "zod",
      ].map((p) => `${p}@${ours.dependencies[p]}`),
    );
    expect(first.output).toContain(
      `npm install -D -E @types/pg@${ours.devDependencies["@types/pg"]} @types/ws@${ours.devDependencies["@types/ws"]}`,
    );
    for (const word of [
      "DURABLE_SECRET=",
      "CRON_SECRET=",
      "DURABLE_SIGNAL_SECRET=whsec_",
      "DATABASE_URL",
      "in app/durable.ts, the list that file hands to createAppDurable({ workflows })",
    ]) {
      expect(first.output).toContain(word);
    }

    // The local cron for `next dev`: a new instrumentation.ts, said in the output.
    expect(read("instrumentation.ts")).toContain(`const { startDevCron } = await import("./lib/durable/next");`);
    expect(first.output).toMatch(/instrumentation\.ts\s+created: starts a local cron under next dev/);
    expect(first.output).toContain("Under next dev the local cron stands in for Vercel Cron");
  });

  it("registers a workflow; running add-to-app again overwrites nothing", () => {
    mkdirSync(path.join(app, "app/workflows"), { recursive: true });
    writeFileSync(path.join(app, "app/workflows/ping.ts"), PING_WORKFLOW);
    const instance = read("app/durable.ts");
    const registered = instance
      .replace(`// import { welcome } from "./workflows/welcome";`, `import { ping } from "./workflows/ping";`)
      .replace("// register your workflows here", "ping,");
    expect(registered).toContain(`import { ping }`);
    expect(registered).toContain("  ping,\n];");
    writeFileSync(path.join(app, "app/durable.ts"), registered);

    const before = snapshot(app);
    const second = addToApp(app);
    expect(second.status, second.output).toBe(0);
    expect(snapshot(app)).toEqual(before);
    expect(second.output).toMatch(/lib\/durable\/: \d+ already there\n/);
    expect(second.output).toMatch(/manifest: lib\/durable\/\.add-to-app\.json unchanged/);
    expect(second.output).not.toMatch(/^ +(created|would create) /m);
    expect(second.output).not.toMatch(/ (created|edited): /);
    expect(second.output).toMatch(/kept as is\s+app\/durable\.ts/); // the edited registry is the app's now
    expect(second.output).toMatch(/vercel\.json\s+unchanged/);
    expect(second.output).toMatch(/next\.config\.ts\s+unchanged/);
  });

  it("--update on an app whose copy is one version behind", () => {
    withApp("update", (dir, inDir) => {
      const added = addToApp(dir);
      expect(added.status, added.output).toBe(0);
      const manifestFile = path.join(dir, MANIFEST);
      const written: Manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
      const OLDER = ["lib/durable/index.ts", "lib/durable/store/migrate.ts", "app/api/durable/signal/route.ts"];
      const EDITED = "lib/durable/duration.ts";
      const REMOVED = "lib/durable/errors.ts";
      const current = Object.fromEntries([...OLDER, EDITED, REMOVED].map((rel) => [rel, inDir(rel)]));

      // An older copy, as an older add-to-app wrote and recorded it: other content, hashes to match,
      // and two files this version no longer has (one untouched since, one changed by the app).
      const older = { ...written, toolkit: { version: "0.0.9" }, files: { ...written.files } };
      const put = (rel: string, text: string) => {
        mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
        writeFileSync(path.join(dir, rel), text);
      };
      for (const rel of OLDER) {
        const text = `// as an older version wrote it\n${current[rel]!.split("\n").slice(0, -6).join("\n")}\n`;
        put(rel, text);
        older.files[rel] = sha256(text);
      }
      put("lib/durable/old/ledger.ts", "export const ledger = 1;\n");
      older.files["lib/durable/old/ledger.ts"] = sha256("export const ledger = 1;\n");
      put("lib/durable/claim.ts", "export const claim = 2; // patched by the app\n");
      older.files["lib/durable/claim.ts"] = sha256("export const claim = 1;\n");
      writeFileSync(manifestFile, JSON.stringify(older, null, 2));
      // The app's own changes, which no manifest records.
      const edited = `${current[EDITED]}// tuned for this app\n`;
      put(EDITED, edited);
      rmSync(path.join(dir, REMOVED));

      const before = snapshot(dir);
      const dry = addToApp(dir, "--update", "--dry-run");
      expect(dry.status, dry.output).toBe(0);
      expect(snapshot(dir)).toEqual(before);
      expect(updateCounts(dry.output, "lib/durable/")).toMatchObject({ write: 1, replace: 2, delete: 1 });

      const updated = addToApp(dir, "--update");
      expect(updated.status, updated.output).toBe(0);
      // Older but untouched: replaced by this version. Removed: written again.
      for (const rel of [...OLDER, REMOVED]) expect(inDir(rel), rel).toBe(current[rel]);
      for (const rel of ["lib/durable/index.ts", "lib/durable/store/migrate.ts", REMOVED])
        expect(inDir(rel), rel).toBe(readFileSync(path.join(REPO_ROOT, rel), "utf8"));
      // Changed by the app: kept, and the diff from the app's file to this version printed.
      expect(inDir(EDITED)).toBe(edited);
      expect(updated.output).toMatch(/kept\s+lib\/durable\/duration\.ts: changed in your app/);
      expect(updated.output).toContain("--- a/lib/durable/duration.ts\n+++ b/lib/durable/duration.ts\n@@ ");
      expect(updated.output).toMatch(/^-\/\/ tuned for this app$/m);
      // Gone from this version: deleted when untouched (with its empty folder), left when changed.
      expect(existsSync(path.join(dir, "lib/durable/old"))).toBe(false);
      expect(updated.output).toMatch(/deleted\s+lib\/durable\/old\/ledger\.ts/);
      expect(inDir("lib/durable/claim.ts")).toBe("export const claim = 2; // patched by the app\n");
      expect(updated.output).toMatch(/left\s+lib\/durable\/claim\.ts: no longer part of the toolkit/);
      expect(updateCounts(updated.output, "lib/durable/")).toMatchObject({
        written: 1,
        replaced: 2,
        "kept with a diff": 1,
        deleted: 1,
        "left (no longer used)": 1,
      });
      expect(updateCounts(updated.output, "app/api/durable/")).toMatchObject({
        written: 0,
        replaced: 1,
        "kept with a diff": 1, // the app's own tick route
        deleted: 0,
      });
      expect(updateCounts(updated.output, "app/durable.ts")).toMatchObject({ unchanged: 1, replaced: 0 });

      // The manifest has the new hashes, keeps the last written one for the app's edit, drops the deleted file.
      const after: Manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
      expect(after.toolkit.version).toBe(ours.version);
      for (const rel of [...OLDER, REMOVED]) expect(after.files[rel], rel).toBe(sha256(current[rel]!));
      expect(after.files[EDITED]).toBe(written.files[EDITED]);
      expect(after.files[EDITED]).not.toBe(sha256(edited));
      expect(after.files["lib/durable/old/ledger.ts"]).toBeUndefined();
      expect(after.files["lib/durable/claim.ts"]).toBe(older.files["lib/durable/claim.ts"]);
      expect(existsSync(path.join(dir, "db"))).toBe(false);

      // Up to date: a second --update changes no byte.
      const settled = snapshot(dir);
      const again = addToApp(dir, "--update");
      expect(again.status, again.output).toBe(0);
      expect(snapshot(dir)).toEqual(settled);
      for (const label of ["lib/durable/", "app/api/durable/", "app/durable.ts"])
        expect(updateCounts(again.output, label), label).toMatchObject({ written: 0, replaced: 0, deleted: 0 });
      expect(again.output).toMatch(/manifest: lib\/durable\/\.add-to-app\.json unchanged/);
    });
  });

  it("--update on an app copied before manifests, with the old db/ copies", () => {
    withApp("update-legacy", (dir, inDir) => {
      const added = addToApp(dir);
      expect(added.status, added.output).toBe(0);
      // What the previous layout left: no manifest, the toolkit's SQL in db/, a file it had in lib/durable.
      rmSync(path.join(dir, MANIFEST));
      const repo = (rel: string) => readFileSync(path.join(REPO_ROOT, rel), "utf8");
      const OLD_DB = ["db/schema.ts", "db/migrations.generated.ts", "db/migrations/0001_durable.sql"];
      mkdirSync(path.join(dir, "db/migrations"), { recursive: true });
      writeFileSync(path.join(dir, "db/schema.ts"), repo("lib/durable/store/tables.ts"));
      writeFileSync(path.join(dir, "db/migrations.generated.ts"), repo("lib/durable/store/migrations.generated.ts"));
      writeFileSync(
        path.join(dir, "db/migrations/0001_durable.sql"),
        repo("lib/durable/store/migrations/0001_durable.sql"),
      );
      writeFileSync(path.join(dir, "db/my-tables.ts"), "export const mine = true;\n"); // the app's own
      writeFileSync(path.join(dir, "lib/durable/db.ts"), `export type { DurableDatabase } from "../../db/schema";\n`);
      const older = `${inDir("lib/durable/names.ts")}// an older line\n`;
      writeFileSync(path.join(dir, "lib/durable/names.ts"), older);
      const dbBefore = Object.entries(snapshot(dir)).filter(([rel]) => rel.startsWith("db/"));

      const updated = addToApp(dir, "--update");
      expect(updated.status, updated.output).toBe(0);
      // The note about db/, which is left alone: only our old copies are named.
      expect(updated.output).toMatch(/Old copies in db\/\n.*no longer uses/);
      for (const rel of OLD_DB) expect(updated.output).toMatch(new RegExp(`^ +${rel.replace(/\./g, "\\.")}$`, "m"));
      expect(updated.output).not.toContain("db/my-tables.ts");
      expect(Object.entries(snapshot(dir)).filter(([rel]) => rel.startsWith("db/"))).toEqual(dbBefore);
      // Without a manifest a file that differs is kept with its diff; one this version lacks is only listed.
      expect(inDir("lib/durable/names.ts")).toBe(older);
      expect(updated.output).toContain("--- a/lib/durable/names.ts\n+++ b/lib/durable/names.ts\n");
      expect(updated.output).toMatch(/left\s+lib\/durable\/db\.ts: not in this version/);
      expect(existsSync(path.join(dir, "lib/durable/db.ts"))).toBe(true);
      expect(updateCounts(updated.output, "lib/durable/")).toMatchObject({
        written: 0,
        replaced: 0,
        "kept with a diff": 1,
        deleted: 0,
        "left (no longer used)": 1,
      });
      // A fresh manifest: the files equal to this version, not the ones it could not vouch for.
      expect(updated.output).toMatch(/manifest: lib\/durable\/\.add-to-app\.json written/);
      const manifest: Manifest = JSON.parse(inDir(MANIFEST));
      expect(manifest.files["lib/durable/index.ts"]).toBe(sha256(repo("lib/durable/index.ts")));
      expect(manifest.files["app/durable.ts"]).toBe(sha256(inDir("app/durable.ts")));
      expect(manifest.files["lib/durable/names.ts"]).toBeUndefined();
      expect(manifest.files["lib/durable/db.ts"]).toBeUndefined();
      expect(manifest.files["app/api/durable/tick/route.ts"]).toBeUndefined();
    });
  });

  it("builds with next build and runs the registered workflow through the copied routes", async () => {
    await buildApp(app);
    server = await startNext({ dir: app, env: { ...secrets.env, DATABASE_URL: undefined, DURABLE_DRIVER: undefined } });
    const client = new DurableClient(server.url, secrets.env.DURABLE_SECRET, secrets.signalKey);

    const started = await client.start("ping", { n: 21 }, "ping-1");
    expect(started).toMatchObject({ id: "ping-1", created: true });
    const done = await client.waitFor(
      started.id,
      started.statusToken,
      (s) => s.status === "completed" || s.status === "failed",
    );
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({ doubled: 42, waited: true });
    expect(done.steps.map((s) => [s.id, s.status])).toEqual([
      ["double", "completed"],
      ["nap", "completed"],
    ]);
    // Idempotent on the id, and unknown workflows are refused: the copied runs route answers.
    expect(await client.start("ping", { n: 21 }, "ping-1")).toMatchObject({ created: false, status: "completed" });
    await expect(client.start("not-registered", {})).rejects.toThrow(/→ 404/);
    // The app's own route at /api/durable/tick is the one that serves.
    expect(await (await fetch(`${server.url}/api/durable/tick`)).text()).toBe("my own tick");
  }, 180_000);
});
