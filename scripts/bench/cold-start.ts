// Cold start (DESIGN: "import, connect, one run and exit of the bundled code, as Next bundles it,
// within 1.2× of graphile-worker"): each system's entry (scripts/bench/cold-start/) is bundled
// with esbuild the way `next build` bundles a route handler's server code, then run as
// `node <entry chunk>` and timed from spawn to exit. Ours starts one run of 3 `run` steps and
// advances it to completion; graphile-worker adds one job and `runOnce`s a worker for it; each step
// (task) inserts one row into bench_receipts, counted after every sample. Samples alternate between
// the two systems after 2 untimed warm-ups of each, so a load change hits both alike.
//
// How it is bundled, and why:
//   - Code splitting, as Next does: a dynamic `import()` gets a chunk of its own, read and compiled
//     only when first called, so what only a dynamic import reaches (ours: `ai`,
//     `@neondatabase/serverless`, `ws`) costs nothing at a cold start that doesn't call it. esbuild
//     splits only ESM output, so the chunks are ESM (`.mjs`), each with a banner that makes a
//     `require` (createRequire) for the bundled CommonJS packages' `require`s of node built-ins and
//     of the externals. Next's server chunks are CommonJS; the module format is not what is timed,
//     which code is read, compiled and run at start is. Tree shaking covers the whole graph, not
//     each chunk: a package both sides import (zod: ours statically, `ai` lazily) goes to a
//     shared chunk, loaded at start, with every part either side uses.
//   - node platform, node20 target, minified, process.env.NODE_ENV "production": as `next build`
//     emits server code.
//   - node_modules bundled in, except what Next keeps external: its built-in list
//     (next/dist/lib/server-external-packages.jsonc, which holds `pg`) and our next.config.ts
//     `serverExternalPackages`. The same options and externals for both entries.
//   - Sizes reported: all chunks, and "loaded": the entry chunk plus the chunks it reaches by
//     static imports (what Node reads before the entry's first line runs; dynamic chunks left out).
//   - Written to a temp dir under node_modules/.cache, so an external `require("pg")` resolves
//     from the project's node_modules as it does from `.next/server`.
//
// Run alone: `npx tsx scripts/bench/cold-start.ts [samples]` (default 10). Every database is
// `<prefix>_durable_bench_cold_start_*` on TEST_DATABASE_URL, dropped at the end.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as esbuild from "esbuild";
import { Logger, runMigrations } from "graphile-worker";
import pg from "pg";
import nextConfig from "../../next.config";
import { connect, createDurable } from "../../lib/durable";
import { MARKS_PREFIX, type Marks } from "./cold-start/marks";
import { dropCreatedDatabases, freshServerDatabase } from "./databases";
import { installedVersion } from "./peer-contender";
import { heading, ms, percentile, ratio, table } from "./report";

export interface ColdStart {
  label: string;
  /** Wall ms from spawn to exit, one per sample. */
  samples: number[];
  p50: number;
  mean: number;
  min: number;
  /** Median ms per phase (see PHASES). */
  phases?: Record<string, number>;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const ENTRIES = path.join(ROOT, "scripts/bench/cold-start");
const WARMUP = 2;
const STEPS = 3;

/**
 * The phases of a sample, from the entry's marks (Marks) and the wall time seen by the bench:
 *   node        process start to the first bundled line: Node's boot, then reading, compiling and
 *               linking the entry chunk and the chunks it imports statically (all of them before
 *               any runs);
 *   import      evaluating the bundled modules (with what they require from node_modules; a
 *               dynamic import's chunk, if called, counts in the phase that calls it);
 *   connect     to a handle ready to use (ours: `connect` + `createDurable`, which load `pg` and
 *               open no connection; graphile-worker: `makeWorkerUtils`, which connects and checks
 *               its migrations);
 *   run         to the run (job) completed;
 *   close       pools ended;
 *   spawn+exit  the rest of the wall time: fork and exec before Node's time origin, and exit.
 */
const PHASES = ["node", "import", "connect", "run", "close", "spawn+exit"] as const;

type System = "durable" | "graphile";

const BENCH_TABLE = "create table bench_receipts (id bigserial primary key, job text not null, step int not null)";

/** The packages `next build` leaves to node_modules in server code: Next's own list plus ours. */
export function nextServerExternals(): string[] {
  const listFile = path.join(ROOT, "node_modules/next/dist/lib/server-external-packages.jsonc");
  // JSON with comments and a trailing comma: every quoted string outside a comment is a name.
  const names = readFileSync(listFile, "utf8")
    .replace(/\/\/.*$/gm, "")
    .match(/"[^"]+"/g)!
    .map((quoted) => JSON.parse(quoted) as string);
  return [...new Set([...names, ...(nextConfig.serverExternalPackages ?? [])])];
}

/** esbuild's options for both entries (see the top of this file). */
function buildOptions(external: string[]): esbuild.BuildOptions {
  return {
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    splitting: true,
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunk-[hash]",
    minify: true,
    define: { "process.env.NODE_ENV": '"production"' },
    banner: {
      js: [
        // For the bundled CommonJS packages: esbuild's `__require` shim uses a `require` in scope.
        'import { createRequire as __coldStartCreateRequire } from "node:module";',
        "const require = __coldStartCreateRequire(import.meta.url);",
        // The first chunk evaluated (every static chunk is read and compiled before any runs): Node
        // has booted and no bundled module has run yet.
        "globalThis.__coldStartTop ??= performance.now();",
      ].join(""),
    },
    external,
    metafile: true,
    logLevel: "error",
  };
}

interface Bundle {
  /** The entry chunk, run as `node <file>`. */
  file: string;
  /** Every chunk, the lazily loaded ones included. */
  bytes: number;
  /** The entry chunk plus the chunks it reaches by static imports: what a cold start loads. */
  loadedBytes: number;
  chunks: { all: number; loaded: number };
  /** The externals this bundle actually imports (node builtins left out). */
  externals: string[];
  /** The largest packages (or our own folders) in the loaded chunks, by bytes of output. */
  largest: { name: string; bytes: number }[];
  /** The largest packages (or our own folders) only in chunks a dynamic import loads. */
  lazy: { name: string; bytes: number }[];
}

function largestOf(outputs: esbuild.Metafile["outputs"][string][]): { name: string; bytes: number }[] {
  const byPackage = new Map<string, number>();
  for (const output of outputs)
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? path.dirname(input);
      byPackage.set(name, (byPackage.get(name) ?? 0) + bytesInOutput);
    }
  return [...byPackage]
    .map(([name, bytes]) => ({ name, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 5);
}

async function bundle(system: System, dir: string, external: string[]): Promise<Bundle> {
  const outdir = path.join(dir, system);
  const result = await esbuild.build({
    ...buildOptions(external),
    entryPoints: { [system]: path.join(ENTRIES, `${system}-entry.ts`) },
    outdir,
  });
  // Metafile output keys are relative to the working directory.
  const outputs = result.metafile!.outputs;
  const entryKey = Object.keys(outputs).find((key) => outputs[key]!.entryPoint)!;
  const loaded = new Set<string>();
  const visit = (key: string) => {
    if (loaded.has(key)) return;
    loaded.add(key);
    for (const i of outputs[key]!.imports) if (!i.external && i.kind === "import-statement") visit(i.path);
  };
  visit(entryKey);
  const sizeOf = (keys: Iterable<string>) => [...keys].reduce((sum, key) => sum + outputs[key]!.bytes, 0);
  const isExternal = (p: string) => external.some((name) => p === name || p.startsWith(`${name}/`));
  const externals = Object.values(outputs).flatMap((o) =>
    o.imports.filter((i) => i.external && isExternal(i.path)).map((i) => i.path),
  );
  const all = Object.keys(outputs);
  const lazyKeys = all.filter((key) => !loaded.has(key));
  return {
    file: path.resolve(entryKey),
    bytes: sizeOf(all),
    loadedBytes: sizeOf(loaded),
    chunks: { all: all.length, loaded: loaded.size },
    externals: [...new Set(externals)],
    largest: largestOf([...loaded].map((key) => outputs[key]!)),
    lazy: largestOf(lazyKeys.map((key) => outputs[key]!)),
  };
}

/** A database per system, ready for the entry (untimed): migrated, with bench_receipts. */
async function prepare(system: System): Promise<{ url: string; client: pg.Client }> {
  const url = await freshServerDatabase(`cold_start_${system}`);
  if (system === "durable") {
    const durable = createDurable({
      db: await connect(url, { driver: "pg" }),
      workflows: [],
      secrets: { durable: "bench" },
      log: () => {},
    });
    await durable.migrate();
    await durable.close();
  } else {
    await runMigrations({ connectionString: url, logger: new Logger(() => () => {}) });
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(BENCH_TABLE);
  return { url, client };
}

interface Sample {
  wall: number;
  marks: Marks;
}

/** Runs `node <bundle>` once; wall ms from spawn to exit. Throws (with its stderr) unless it exits 0. */
function runBundle(file: string, url: string, job: string): Promise<Sample> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    let wall = 0;
    const t0 = performance.now();
    // A clean environment: nothing of the bench's own (tsx's NODE_OPTIONS, say) reaches the entry.
    const child = spawn(process.execPath, [file], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, NODE_ENV: "production", BENCH_DATABASE_URL: url, BENCH_JOB: job },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("exit", () => {
      wall = performance.now() - t0;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const line = stdout.split("\n").find((l) => l.startsWith(MARKS_PREFIX));
      if (code !== 0 || !line) {
        reject(new Error(`${path.basename(file)} (job ${job}) exited with ${code}:\n${stderr || stdout}`));
        return;
      }
      resolve({ wall, marks: JSON.parse(line.slice(MARKS_PREFIX.length)) as Marks });
    });
  });
}

/** One timed (or warm-up) run of `system`, checked: exactly STEPS receipt rows for its job. */
async function sample(system: System, file: string, db: { url: string; client: pg.Client }, job: string) {
  const result = await runBundle(file, db.url, job);
  const { rows } = await db.client.query<{ n: number }>(
    "select count(*)::int as n from bench_receipts where job = $1",
    [job],
  );
  if (rows[0]!.n !== STEPS) throw new Error(`${system} job ${job}: ${rows[0]!.n} receipt rows, not ${STEPS}`);
  return result;
}

function phasesOf({ wall, marks }: Sample): Record<(typeof PHASES)[number], number> {
  return {
    node: marks.top,
    import: marks.imported - marks.top,
    connect: marks.connected - marks.imported,
    run: marks.ran - marks.connected,
    close: marks.closed - marks.ran,
    // Before Node's time origin (fork, exec) and after the last mark (exit), as the bench sees it.
    "spawn+exit": wall - marks.closed,
  };
}

function summarise(label: string, samples: Sample[]): ColdStart {
  const walls = samples.map((s) => s.wall);
  const phases: Record<string, number> = {};
  for (const phase of PHASES)
    phases[phase] = percentile(
      samples.map((s) => phasesOf(s)[phase]),
      50,
    );
  return {
    label,
    samples: walls,
    p50: percentile(walls, 50),
    mean: walls.reduce((a, b) => a + b, 0) / walls.length,
    min: Math.min(...walls),
    phases,
  };
}

/** Bundles both entries, prepares a database for each, and times `samples` cold starts of each. */
export async function coldStart(samples: number): Promise<{
  durable: ColdStart;
  graphile: ColdStart;
  /** Bytes of every chunk, the lazily loaded ones included. */
  bundleBytes: { durable: number; graphile: number };
  /** Bytes of the entry chunk plus the chunks it imports statically: what a cold start loads. */
  loadedBytes: { durable: number; graphile: number };
  notes: string[];
}> {
  const external = nextServerExternals();
  const cache = path.join(ROOT, "node_modules/.cache");
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(path.join(cache, "cold-start-"));
  const dbs: { url: string; client: pg.Client }[] = [];
  try {
    const bundles = {
      durable: await bundle("durable", dir, external),
      graphile: await bundle("graphile", dir, external),
    };
    const durableDb = await prepare("durable");
    dbs.push(durableDb);
    const graphileDb = await prepare("graphile");
    dbs.push(graphileDb);
    const databases = { durable: durableDb, graphile: graphileDb };
    const times: Record<System, Sample[]> = { durable: [], graphile: [] };
    for (let i = 0; i < WARMUP + samples; i++) {
      for (const system of ["durable", "graphile"] as const) {
        const result = await sample(system, bundles[system].file, databases[system], `${system}-${i}`);
        if (i >= WARMUP) times[system].push(result);
      }
    }
    const notes = [
      "esbuild: bundle, code splitting (format esm + createRequire banner), platform node, target node20, " +
        "minify, NODE_ENV production",
      ...(["durable", "graphile"] as const).map(
        (system) =>
          `${system}: ${bundles[system].chunks.all} chunks, ${bundles[system].chunks.loaded} loaded at start ` +
          `(entry + static imports), ${kb(bundles[system].loadedBytes)} of ${kb(bundles[system].bytes)}`,
      ),
      `externals: Next's server-external list + next.config.ts serverExternalPackages (${external.length} ` +
        `names); imported: ours ${bundles.durable.externals.join(", ")}; ` +
        `graphile-worker ${bundles.graphile.externals.join(", ")}`,
      ...(["durable", "graphile"] as const).map(
        (system) =>
          `largest loaded in ${system}: ${sizes(bundles[system].largest)}; ` +
          `only in lazy chunks: ${sizes(bundles[system].lazy) || "none"}`,
      ),
    ];
    return {
      durable: summarise("ours (lib/durable)", times.durable),
      graphile: summarise(`graphile-worker ${installedVersion("graphile-worker")}`, times.graphile),
      bundleBytes: { durable: bundles.durable.bytes, graphile: bundles.graphile.bytes },
      loadedBytes: { durable: bundles.durable.loadedBytes, graphile: bundles.graphile.loadedBytes },
      notes,
    };
  } finally {
    await Promise.all(dbs.map((db) => db.client.end()));
    rmSync(dir, { recursive: true, force: true });
  }
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
const sizes = (list: { name: string; bytes: number }[]) =>
  list.map(({ name, bytes }) => `${name} ${kb(bytes)}`).join(", ");

/** Prints what `coldStart` measured: the table, the phases, the ratio of the p50s and the notes. */
export function printColdStart(result: Awaited<ReturnType<typeof coldStart>>): void {
  const { durable, graphile, bundleBytes, loadedBytes } = result;
  const row = (c: ColdStart, system: System) => [
    c.label,
    ms(c.p50),
    ms(c.mean),
    ms(c.min),
    kb(loadedBytes[system]),
    kb(bundleBytes[system]),
  ];
  table([["system", "p50", "mean", "min", "loaded", "all chunks"], row(durable, "durable"), row(graphile, "graphile")]);
  console.log("\n  median ms per phase:\n");
  table([["system", ...PHASES], ...[durable, graphile].map((c) => [c.label, ...PHASES.map((p) => ms(c.phases![p]!))])]);
  console.log(`\n  ours / graphile-worker, p50: ${ratio(durable.p50 / graphile.p50)} (target ≤ 1.20×)\n`);
  for (const note of result.notes) console.log(`  ${note}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const samples = Number(process.argv[2] ?? 10);
  try {
    heading(`Cold start: bundled, spawn to exit, ${samples} samples each (interleaved)`);
    printColdStart(await coldStart(samples));
  } finally {
    await dropCreatedDatabases();
  }
}
