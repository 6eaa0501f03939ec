// One process per embedded database. PGlite does not lock its data directory: two processes on
// one `.durable/pglite` (two `next start`, or `npm run dev` beside `npm run worker`) both open it,
// each writes over the other's pages, and after a restart the directory no longer opens
// (`RuntimeError: Aborted()`) with every run in it lost. So `connect()` takes this lock first: a
// file beside the directory naming the holder, created exclusively. A lock whose holder is gone (a
// process killed with SIGKILL never removes its file) is stale and taken over (docs/decisions.md,
// "One process per embedded database").
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";

interface Holder {
  pid: number;
  /** The holder's start time in clock ticks since boot (Linux), so a reused pid is not taken for it. */
  started: string | null;
}

/**
 * The locks this process holds, so a second open inside it is refused too; on globalThis, since a
 * Next.js server may evaluate this module once per bundle.
 */
const HELD = Symbol.for("durable-next.pglite-locks");
const shared = globalThis as { [HELD]?: Set<string> };
shared[HELD] ??= new Set();
const held = shared[HELD];
const SAME_PROCESS = "this process already has it open: reuse that handle";

/**
 * The embedded database is held by another process (or another handle of this one). A fault of
 * the deployment, not of a request: the routes answer it with 503 and these words
 * (http/error-response.ts), which say what to do.
 */
export class DataDirInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DataDirInUseError";
  }
}

/**
 * Takes the lock of the PGlite data directory `dir`, or throws an error naming the holder and
 * what to do instead. Returns the function that gives it back (`db.destroy()` calls it).
 */
export function lockDataDir(dir: string): () => void {
  const file = `${dir}.lock`;
  if (held.has(file)) throw inUse(dir, process.pid, SAME_PROCESS);
  const me: Holder = { pid: process.pid, started: startTimeOf(process.pid) };
  for (let tries = 0; ; tries++) {
    try {
      writeFileSync(file, JSON.stringify(me), { flag: "wx" });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || tries >= 3) throw error;
    }
    const text = readText(file);
    const holder = parseHolder(text);
    if (holder && isAlive(holder)) {
      throw inUse(dir, holder.pid, holder.pid === process.pid ? SAME_PROCESS : "it is running now");
    }
    // Stale (or unreadable, a holder killed while writing it): remove it, unless another
    // process took it over since we read it, and try again.
    if (readText(file) === text) removeQuietly(file);
  }
  held.add(file);
  const release = () => {
    if (!held.delete(file)) return;
    process.off("exit", release);
    if (parseHolder(readText(file))?.pid === process.pid) removeQuietly(file);
  };
  // A process that exits without closing its database gives the lock back too.
  process.on("exit", release);
  return release;
}

function inUse(dir: string, pid: number, why: string): DataDirInUseError {
  return new DataDirInUseError(
    `The embedded database ${dir} is in use by process ${pid} (${why}). PGlite serves one process: ` +
      "a second one on the same directory corrupts it. Run one process on it (stop the other " +
      "`next dev`, `next start` or worker), or point DATABASE_URL at a PostgreSQL server that " +
      "several processes can share.",
  );
}

function parseHolder(text: string | null): Holder | null {
  try {
    const holder = JSON.parse(text ?? "") as Holder;
    return Number.isSafeInteger(holder.pid) && holder.pid > 0 ? holder : null;
  } catch {
    return null;
  }
}

/** Whether the holder still runs: its pid is alive and, where /proc tells, started when it did. */
function isAlive(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false; // ESRCH: no such process
  }
  const started = startTimeOf(holder.pid);
  return holder.started === null || started === null || started === holder.started;
}

/** Field 22 of /proc/<pid>/stat (start time); null where there is no /proc. */
function startTimeOf(pid: number): string | null {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
}

function readText(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

function removeQuietly(file: string) {
  try {
    unlinkSync(file);
  } catch {}
}
