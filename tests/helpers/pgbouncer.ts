// A PgBouncer in transaction mode in front of the test server, for the prepared-statements tests
// (docs/performance.md, "Prepared statements"). Debian's package is 1.18: no protocol-level
// prepared statements in transaction mode (1.21 added them), the case `preparedStatements: false`
// is for. CI installs it with `apt-get install -y pgbouncer`.
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { until } from "./until";

const CANDIDATES = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer", "/usr/local/bin/pgbouncer"];

/** The pgbouncer binary, or undefined when none is installed. */
export function pgbouncerBinary(): string | undefined {
  for (const file of CANDIDATES) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {}
  }
  return undefined;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Starts pgbouncer in transaction mode in front of `serverUrl`'s host, `serverPoolSize` server
 * connections per database; `url(db)` is the URL of a database through it.
 */
export async function startPgbouncer(binary: string, serverUrl: string, serverPoolSize: number) {
  const server = new URL(serverUrl);
  const dir = mkdtempSync(path.join(tmpdir(), "durable-pgbouncer-"));
  chmodSync(dir, 0o777); // pgbouncer refuses to run as root: `-u nobody` below writes its log here
  const port = await freePort();
  const user = decodeURIComponent(server.username) || "postgres";
  writeFileSync(
    path.join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${server.hostname} port=${server.port || 5432} user=${user}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = any",
      "pool_mode = transaction",
      `default_pool_size = ${serverPoolSize}`,
      `logfile = ${path.join(dir, "pgbouncer.log")}`,
    ].join("\n"),
  );
  const asRoot = process.getuid?.() === 0 ? ["-u", "nobody"] : [];
  const child: ChildProcess = spawn(binary, [...asRoot, path.join(dir, "pgbouncer.ini")], { stdio: "ignore" });
  let exited = false;
  child.once("exit", () => (exited = true));
  await until(async () => {
    if (exited) throw new Error(`pgbouncer exited at start (log in ${dir})`);
    return accepts(port);
  });
  return {
    url(database: string): string {
      const url = new URL(database);
      url.host = `127.0.0.1:${port}`;
      return url.toString();
    },
    async stop(): Promise<void> {
      if (!exited) {
        const gone = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
