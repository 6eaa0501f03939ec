// Build a Next.js app once and serve it with `next start` for end-to-end tests, or serve it with
// `next dev` as a newcomer does.
//
//   await buildApp();                                   // skipped when .next holds a build of this tree
//   const server = await startNext({ env: { DATABASE_URL: "memory://" } });
//   await fetch(`${server.url}/api/durable/runs`, …);
//   await server.stop();                                // in afterAll: no stray processes
//
//   const dev = await startNextDev({ env: { DATABASE_URL: "memory://" } });  // no build needed
//
// `next build` costs ~20 s and ~640 MB, so test files share one build: a fingerprint of the sources
// that go into it is written next to the build, a later call with the same sources skips the
// build, and a lock serialises test files that ask at the same time (vitest runs two at once).
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(fileURLToPath(new URL("../../..", import.meta.url)));

const MARKER = "e2e-build-fingerprint";
// Not part of what `next build` bundles: editing a test or a script does not call for a new build.
const SKIP_DIRS = new Set([
  "node_modules",
  ".next",
  ".git",
  ".durable",
  "tests",
  "test-artifacts",
  "scripts",
  "coverage",
]);
// Written by `next build` itself, or by the type checker.
const SKIP_FILE = (name: string) => name === "next-env.d.ts" || name.endsWith(".tsbuildinfo");

/** Hash of every file that goes into the build (path and content). */
export const sourceFingerprint = (dir: string): string => contentHash(dir, [""]);

/**
 * Hash of the files at `paths` under `root` (a path names a file or a folder, walked in name order,
 * build output and installs skipped): their paths and contents, so any edit changes it.
 */
export function contentHash(root: string, paths: string[]): string {
  const hash = createHash("sha256");
  const walk = (rel: string) => {
    const full = path.join(root, rel);
    if (!existsSync(full)) return;
    if (!statSync(full).isDirectory()) {
      hash.update(rel).update("\u0000").update(readFileSync(full)).update("\u0000");
      return;
    }
    const entries = readdirSync(full, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory() ? !SKIP_DIRS.has(entry.name) : entry.isFile() && !SKIP_FILE(entry.name)) walk(child);
    }
  };
  for (const rel of paths) walk(rel);
  return hash.digest("hex");
}

function builtFingerprint(dir: string): string | null {
  const marker = path.join(dir, ".next", MARKER);
  if (!existsSync(path.join(dir, ".next", "BUILD_ID")) || !existsSync(marker)) return null;
  return readFileSync(marker, "utf8").trim();
}

function nextBin(dir: string): string {
  return createRequire(path.join(dir, "package.json")).resolve("next/dist/bin/next");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * A directory lock in the temp dir, one per `dir` (an app dir, or a cache entry): the test files of
 * a run that ask for the same build or cache at once take turns. A lock whose owner died is taken over.
 */
export async function withBuildLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(
    os.tmpdir(),
    `durable-next-build-${createHash("sha1").update(dir).digest("hex").slice(0, 12)}.lock`,
  );
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(path.join(lock, "pid"), String(process.pid));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      let owner = NaN;
      try {
        owner = Number(readFileSync(path.join(lock, "pid"), "utf8"));
      } catch {
        // The owner has made the dir but not written its pid yet: wait for it.
      }
      if (Number.isInteger(owner) && owner > 0 && !isAlive(owner)) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`waited 10 minutes for the build lock ${lock}`);
      await sleep(300);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Runs `next build` in `dir` unless `.next` already holds a build of the current sources. */
export async function buildApp(
  dir: string = REPO_ROOT,
  { args = [], env = {} }: { args?: string[]; env?: Record<string, string> } = {},
): Promise<{ built: boolean; ms: number }> {
  const startedAt = Date.now();
  return withBuildLock(dir, async () => {
    const fingerprint = sourceFingerprint(dir);
    if (builtFingerprint(dir) === fingerprint) return { built: false, ms: Date.now() - startedAt };
    rmSync(path.join(dir, ".next", MARKER), { force: true });
    const child = spawn(process.execPath, [nextBin(dir), "build", ...args], {
      cwd: dir,
      env: { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout!.on("data", (chunk) => (output += chunk));
    child.stderr!.on("data", (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (exitCode) => resolve(exitCode));
    });
    if (code !== 0) throw new Error(`next build in ${dir} exited with ${code}:\n${output.slice(-6000)}`);
    writeFileSync(path.join(dir, ".next", MARKER), `${fingerprint}\n`);
    return { built: true, ms: Date.now() - startedAt };
  });
}

export interface NextServer {
  url: string;
  port: number;
  /** Everything the server printed so far (stdout and stderr). */
  output(): string;
  /** Stops the server and waits for it to exit (SIGTERM, SIGKILL after 5 s). Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartNextOptions {
  /** The app (default: this repository); `next start` needs it built. */
  dir?: string;
  /** Default: a free port. */
  port?: number;
  /** Added to the inherited environment; `undefined` removes an inherited variable. */
  env?: Record<string, string | undefined>;
  /** The server's working directory (default `dir`); PGlite keeps `.durable/` under it. */
  cwd?: string;
  /** How long to wait for the first answer (default 60 s). */
  readyTimeoutMs?: number;
  /** More arguments for the command, as an app's own script gives them (`--turbopack`). */
  args?: string[];
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.listen(0, "127.0.0.1", resolve).once("error", reject));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const running = new Set<ChildProcess>();
// A worker that dies without afterAll still takes its servers with it.
process.once("exit", () => {
  for (const child of running) killGroup(child, "SIGKILL");
});

/** Signals the child's whole process group (next may start workers of its own); gone is fine. */
function killGroup(child: ChildProcess, signal: NodeJS.Signals) {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the group has ended already.
  }
}

/** `next start` on 127.0.0.1 with NODE_ENV=production; resolves once it answers HTTP. */
export async function startNext(options: StartNextOptions = {}): Promise<NextServer> {
  const dir = options.dir ?? REPO_ROOT;
  const port = options.port ?? (await freePort());
  const args = [nextBin(dir), "start", dir, "--port", String(port), "--hostname", "127.0.0.1", ...(options.args ?? [])];
  return serve("next start", args, {
    ...options,
    port,
    env: { NODE_ENV: "production", ...options.env },
    probe: "http",
  });
}

export interface StartNextDevOptions extends StartNextOptions {
  /**
   * `-H` for next dev. Default none, as `npm run dev` runs it: it listens on every address and
   * takes itself for `localhost`, so a page opened at 127.0.0.1 is another origin to it.
   */
  hostname?: string;
}

/**
 * `next dev` (NODE_ENV=development, no build) on a free port, addressed as 127.0.0.1; resolves once
 * it listens. Pages compile on their first request: give that one a generous timeout (30–60 s on two
 * cores). It writes into `.next/dev`, so it may run beside a `next build` in `.next`.
 */
export async function startNextDev(options: StartNextDevOptions = {}): Promise<NextServer> {
  const dir = options.dir ?? REPO_ROOT;
  const release = await holdDevLock(dir);
  try {
    const port = options.port ?? (await freePort());
    const host = options.hostname ? ["--hostname", options.hostname] : [];
    const args = [nextBin(dir), "dev", dir, "--port", String(port), ...host, ...(options.args ?? [])];
    const server = await serve("next dev", args, {
      ...options,
      port,
      env: { NODE_ENV: "development", ...options.env },
      // An HTTP probe would wait for a page to compile: a connection is enough to know it listens.
      probe: "tcp",
    });
    return { ...server, stop: () => server.stop().finally(release) };
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * `next dev` allows one dev server per app dir (a second one exits: "Another next dev server is
 * already running in this directory"): test files that serve the same app under next dev take
 * turns. Resolves once this one holds the dir, with the function that gives it back.
 */
function holdDevLock(dir: string): Promise<() => void> {
  return new Promise((resolve, reject) => {
    withBuildLock(`${dir}\u0000next-dev`, () => new Promise<void>((release) => resolve(release))).catch(reject);
  });
}

/** Can a connection to 127.0.0.1:port be opened now? */
function listens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.setTimeout(2000);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    socket.once("timeout", () => done(false));
  });
}

/** Spawns `args` (next's bin and its command) in its own process group; resolves once the probe answers. */
async function serve(
  what: string,
  args: string[],
  options: StartNextOptions & { port: number; probe: "http" | "tcp" },
): Promise<NextServer> {
  const dir = options.dir ?? REPO_ROOT;
  const { port } = options;
  const env: Record<string, string | undefined> = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", ...options.env };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];

  const child = spawn(process.execPath, args, {
    cwd: options.cwd ?? dir,
    env: env as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group, so stop() ends everything it started
  });
  running.add(child);
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => running.delete(child));

  const url = `http://127.0.0.1:${port}`;
  const server: NextServer = {
    url,
    port,
    output: () => output,
    async stop() {
      killGroup(child, "SIGTERM");
      const timer = setTimeout(() => killGroup(child, "SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
      killGroup(child, "SIGKILL"); // any worker left behind in the group
    },
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `${what} exited (${child.exitCode ?? child.signalCode}) before answering:\n${output.slice(-4000)}`,
      );
    }
    if (options.probe === "tcp" ? await listens(port) : await answers(url)) return server;
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`${what} did not answer on ${url} within the timeout:\n${output.slice(-4000)}`);
    }
    await sleep(100);
  }
}

/** Does the server answer HTTP? Any answer will do: a path no app serves keeps this probe cheap. */
async function answers(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/__e2e_ready_probe`, { signal: AbortSignal.timeout(2000) });
    return true;
  } catch {
    return false;
  }
}
