// A WebSocket → TCP proxy so Neon's real driver (Postgres over WebSocket) reaches the local
// PostgreSQL in tests. Each WebSocket carries the raw Postgres wire protocol as binary frames.
import net from "node:net";
import type { AddressInfo } from "node:net";
import { neonConfig } from "@neondatabase/serverless";
import ws, { WebSocketServer } from "ws";

export async function startNeonProxy(opts: { target?: { host: string; port: number } } = {}): Promise<{
  port: number;
  /** WebSocket connections accepted so far: lets a test prove it went through the proxy. */
  readonly connections: number;
  close(): Promise<void>;
}> {
  const fallback = opts.target ?? { host: "127.0.0.1", port: 5432 };
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve, reject) => {
    wss.once("listening", resolve);
    wss.once("error", reject);
  });
  const sockets = new Set<net.Socket>();
  let connections = 0;

  wss.on("connection", (socket, req) => {
    connections++;
    // The driver sends `?address=host:port` (see configureNeonForLocalProxy); an explicit
    // target wins so a test can pin the server.
    const address = new URL(req.url ?? "/", "http://x").searchParams.get("address");
    const [host, port] =
      opts.target || !address
        ? [fallback.host, fallback.port]
        : [address.slice(0, address.lastIndexOf(":")), Number(address.slice(address.lastIndexOf(":") + 1))];
    const tcp = net.connect({ host, port });
    sockets.add(tcp);
    tcp.setNoDelay(true);
    // Close both sides together so neither leaks when the other ends or fails.
    const closeBoth = () => {
      sockets.delete(tcp);
      tcp.destroy();
      if (socket.readyState === ws.OPEN || socket.readyState === ws.CONNECTING) socket.close();
    };
    // Frames that arrive before TCP connects are buffered by the socket's write queue.
    socket.on("message", (data: Buffer | ArrayBuffer | Buffer[]) => {
      tcp.write(Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer));
    });
    tcp.on("data", (chunk) => socket.send(chunk, { binary: true }));
    socket.on("close", closeBoth);
    socket.on("error", closeBoth);
    tcp.on("close", closeBoth);
    tcp.on("error", closeBoth);
  });

  return {
    port: (wss.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        for (const c of wss.clients) c.terminate();
        wss.close(() => resolve());
      }),
  };
}

/** Point Neon's driver (process-global config) at the proxy on 127.0.0.1:`port`. */
export function configureNeonForLocalProxy(port: number): void {
  neonConfig.webSocketConstructor = ws;
  // The function form gets the database host and port from the connection string.
  neonConfig.wsProxy = (host, dbPort) => `127.0.0.1:${port}/v1?address=${host}:${dbPort}`;
  neonConfig.useSecureWebSocket = false; // ws://, not wss://
  neonConfig.pipelineTLS = false; // no TLS inside the WebSocket: the local server has none
  neonConfig.pipelineConnect = false; // trust auth: no password message to pipeline
  neonConfig.coalesceWrites = false; // locally, batching writes only adds latency
}
