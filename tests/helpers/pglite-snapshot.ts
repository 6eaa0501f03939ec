// A vitest setup file (vitest.config.ts, setupFiles): every in-memory PGlite a test opens starts
// from one snapshot of a fresh data directory instead of running initdb again. PGlite 0.5 runs
// initdb (a second WebAssembly instance) on each `PGlite.create()` without a data dir: ~2 s on an
// idle core, the larger part of opening an in-memory database, and the suite opens hundreds.
//
// The snapshot is what initdb wrote, dumped once (`dumpDataDir`) and loaded with `loadDataDir`,
// so a test sees the same empty database; it is kept in the temp dir under a name keyed on the
// SHA-256 of PGlite's package.json (its version), so another PGlite makes a new one. Only a
// create with no data dir and options initdb does not read (parsers, serializers, extensions,
// debug) is answered from it; anything else, and every app a test serves (its own process), runs
// initdb as before.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { PGlite, type PGliteOptions } from "@electric-sql/pglite";

const PATCHED = Symbol.for("durable-next.tests.pglite-snapshot");
const READS_NO_INITDB = new Set(["parsers", "serializers", "extensions", "debug"]);

const packageJson = readFileSync(
  path.join(path.dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite")), "../package.json"),
);
/** The snapshot's file, named after the PGlite that wrote it. */
export const SNAPSHOT_FILE = path.join(
  os.tmpdir(),
  `durable-next-pglite-initdb-${createHash("sha256").update(packageJson).digest("hex").slice(0, 16)}.tar`,
);

type Create = typeof PGlite.create;
const original: Create = (PGlite as unknown as Record<symbol, Create>)[PATCHED] ?? PGlite.create.bind(PGlite);

/** The options of a `create(dataDirOrOptions, options)` call, or null when it names a data dir. */
function inMemoryOptions(first: unknown, second: unknown): PGliteOptions | null {
  if (typeof first === "string" && first !== "memory://") return null;
  const options = ((typeof first === "object" && first) || second || {}) as PGliteOptions;
  if (options.dataDir && options.dataDir !== "memory://") return null;
  return Object.keys(options).every((key) => READS_NO_INITDB.has(key)) ? options : null;
}

let snapshot: Promise<Blob> | undefined;

/** The snapshot: read from the temp dir, or made there by a fresh initdb (written whole, then renamed). */
function freshDataDir(): Promise<Blob> {
  snapshot ??= (async () => {
    if (existsSync(SNAPSHOT_FILE)) return new Blob([readFileSync(SNAPSHOT_FILE)]);
    const fresh = await original({});
    const tar = await fresh.dumpDataDir("none");
    await fresh.close();
    const partial = `${SNAPSHOT_FILE}.${process.pid}`;
    writeFileSync(partial, Buffer.from(await tar.arrayBuffer()));
    renameSync(partial, SNAPSHOT_FILE); // two workers may both write it: the same bytes either way
    return tar;
  })();
  return snapshot;
}

if (!(PATCHED in PGlite)) {
  Object.defineProperty(PGlite, PATCHED, { value: original });
  PGlite.create = (async (first?: unknown, second?: unknown) => {
    const options = inMemoryOptions(first, second);
    if (!options) return original(first as never, second as never);
    return original({ ...options, dataDir: undefined, loadDataDir: await freshDataDir() });
  }) as Create;
}
