// CPU time spent during a measurement: this Node process (process.cpuUsage) and, when the server
// runs on this machine, the PostgreSQL backends serving the measured database (/proc/<pid>/stat).
import { readFileSync } from "node:fs";
import pg from "pg";

export interface CpuSpent {
  /** ms of CPU in this process (all tick loops share its one JS thread). */
  node: number;
  /** ms of CPU in the database's backends; null when they cannot be read (remote server). */
  server: number | null;
}

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU ms of each readable backend (utime + stime); a pid that is gone or unreadable is left out. */
function backendCpuMs(pids: number[]): Map<number, number> {
  const spent = new Map<number, number>();
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      spent.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND);
    } catch {
      // not on this machine, or the session ended (an idle pool connection closed: no CPU to count)
    }
  }
  return spent;
}

/** Starts measuring; call the result to stop. `url`: the server database whose open sessions to watch. */
export async function measureCpu(url?: string): Promise<() => CpuSpent> {
  let pids: number[] = [];
  if (url) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query(
      "select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()",
    );
    await client.end();
    pids = rows.map((r) => r.pid as number);
  }
  const server0 = backendCpuMs(pids);
  const node0 = process.cpuUsage();
  return () => {
    const node = process.cpuUsage(node0);
    const server1 = backendCpuMs(pids);
    let server = 0;
    for (const [pid, before] of server0) server += (server1.get(pid) ?? before) - before;
    return { node: (node.user + node.system) / 1000, server: server0.size === 0 ? null : server };
  };
}

/**
 * As measureCpu, counting the sessions of the database that opened during the measurement too (a
 * pool that connects after the start): each one's CPU since it began. The stop reads
 * pg_stat_activity again, so it is async. A session that opened and closed in between is not seen.
 */
export async function measureSessionsCpu(url: string): Promise<() => Promise<CpuSpent>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const sessions = async () =>
    (
      await client.query(
        "select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()",
      )
    ).rows.map((r) => r.pid as number);
  const server0 = backendCpuMs(await sessions());
  const node0 = process.cpuUsage();
  return async () => {
    const node = process.cpuUsage(node0);
    const pids = await sessions();
    await client.end();
    const server1 = backendCpuMs([...new Set([...server0.keys(), ...pids])]);
    let server = 0;
    // A session that ended in between is left out (its /proc entry is gone), as in measureCpu.
    for (const [pid, after] of server1) server += after - (server0.get(pid) ?? 0);
    return { node: (node.user + node.system) / 1000, server: server1.size === 0 ? null : server };
  };
}
