// The bench's delaying TCP proxy (`npm run bench -- --peers --rtt <ms>`, docs/performance.md,
// "Peers"): it listens on 127.0.0.1 at a port of its own and forwards every connection to the
// server, holding each chunk for half the round trip time in each direction, so that a request and
// its answer cost `rtt` ms more than they would direct. Chunks keep their order in each direction.
//
// It counts round trips: the times a client sends after it has been delivered something from the
// server since its previous send (its first send on a connection counts too). A query answered
// and the next query sent is one; a pipelined batch written before any answer arrives is one.
//
// It runs in a child process of its own (startDelayProxy), so its timers do not wait behind the
// measured code's JavaScript and its CPU is not counted as the measured process's.
import { fork } from "node:child_process";
import net from "node:net";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { nowMs, preciseTimer } from "./precise-timer";

export interface DelayProxyOptions {
  /** Added to every round trip, ms (half of it each way). */
  rttMs: number;
  targetHost: string;
  targetPort: number;
}

/** A chunk on its way: written to `to` at `at` (nowMs clock); `null` ends `to`. */
interface InFlight {
  at: number;
  to: net.Socket;
  chunk: Buffer | null;
  delivered: () => void;
}

/**
 * Every chunk of every connection waits in one queue: all wait the same time, so the queue is in
 * the order they are due, and each direction of each connection keeps its order.
 */
function delayLine(initialDelayMs: number) {
  let delayMs = initialDelayMs;
  const queue: InFlight[] = [];
  let head = 0;
  const deliver = (item: InFlight) => {
    if (item.to.destroyed) return;
    if (item.chunk === null) item.to.end();
    else {
      item.to.write(item.chunk);
      item.delivered();
    }
  };
  const timer = preciseTimer(() => {
    const now = nowMs() + 0.01;
    while (head < queue.length && queue[head]!.at <= now) deliver(queue[head++]!);
    if (head > 1024) {
      queue.splice(0, head); // what was delivered
      head = 0;
    }
    if (head < queue.length) timer.wakeAt(queue[head]!.at);
  });
  return {
    send(to: net.Socket, chunk: Buffer | null, delivered: () => void = () => {}) {
      const item = { at: nowMs() + delayMs, to, chunk, delivered };
      if (delayMs <= 0) return deliver(item);
      queue.push(item);
      if (queue.length - head === 1) timer.wakeAt(item.at);
    },
    setDelay(ms: number) {
      delayMs = ms;
    },
    close: () => timer.close(),
  };
}

/** Serves the proxy in this process; answers its port and a reader of its round-trip counter. */
export async function serveDelayProxy(
  options: DelayProxyOptions,
): Promise<{ port: number; roundTrips: () => number; setRtt: (ms: number) => void; close: () => Promise<void> }> {
  const line = delayLine(options.rttMs / 2);
  let roundTrips = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(options.targetPort, options.targetHost);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    sockets.add(client).add(upstream);
    // Whether the client was delivered something from the server since its last send.
    let heard = true;
    const heardNow = () => {
      heard = true;
    };
    client.on("data", (chunk) => {
      if (heard) roundTrips++;
      heard = false;
      line.send(upstream, chunk);
    });
    upstream.on("data", (chunk) => line.send(client, chunk, heardNow));
    client.on("end", () => line.send(upstream, null));
    upstream.on("end", () => line.send(client, null));
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", close).on("close", close);
    upstream.on("error", close).on("close", close);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    roundTrips: () => roundTrips,
    setRtt: (ms) => line.setDelay(ms / 2),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await line.close();
    },
  };
}

export interface DelayProxy {
  /** The round trip time asked for, ms. */
  rttMs: number;
  /** What the proxy holds a round trip's two chunks for in all, ms (calibrated, see startDelayProxy). */
  heldMs: number;
  /** What it adds to a round trip, measured after calibration, ms. */
  addedMs: number;
  /** `url` with its host and port replaced by the proxy's. */
  through(url: string): string;
  /** Round trips counted so far, over every connection. */
  roundTrips(): Promise<number>;
  close(): Promise<void>;
}

type Reply = { type: "listening"; port: number } | { type: "roundTrips"; count: number } | { type: "set" };

/**
 * Starts the proxy in a child process, in front of the server `url` points at, and calibrates it:
 * waking up (the proxy's, the client's and the server's, on a virtual machine's idle cores) costs
 * a few tenths of a millisecond a round trip on top of what the proxy holds, so it holds less by
 * what a measured round trip of `select 1` overshoots, until the round trip costs `rttMs` more
 * than direct (three adjustments at most).
 */
export async function startDelayProxy(rttMs: number, url: string): Promise<DelayProxy> {
  const target = new URL(url);
  const child = fork(fileURLToPath(new URL("./delay-proxy-process.ts", import.meta.url)), [], {
    env: {
      ...process.env,
      BENCH_PROXY_RTT_MS: String(rttMs),
      BENCH_PROXY_TARGET_HOST: target.hostname,
      BENCH_PROXY_TARGET_PORT: target.port || "5432",
    },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const replies: ((reply: Reply) => void)[] = [];
  child.on("message", (reply: Reply) => replies.shift()?.(reply));
  const ask = (message?: object) => {
    const answer = new Promise<Reply>((resolve) => replies.push(resolve));
    if (message) child.send(message);
    return answer;
  };
  const listening = await ask();
  if (listening.type !== "listening") throw new Error("delay proxy: no port");
  const through = (original: string) => {
    const proxied = new URL(original);
    proxied.hostname = "127.0.0.1";
    proxied.port = String(listening.port);
    return proxied.toString();
  };
  let heldMs = rttMs;
  let addedMs = await addedRoundTripMs(through(url), url);
  for (let i = 0; i < 3 && rttMs > 0 && Math.abs(addedMs - rttMs) > 0.05 * rttMs; i++) {
    heldMs = Math.max(0, heldMs - (addedMs - rttMs));
    await ask({ type: "setRtt", ms: heldMs });
    addedMs = await addedRoundTripMs(through(url), url);
  }
  return {
    rttMs,
    heldMs,
    addedMs,
    through,
    async roundTrips() {
      const reply = await ask({ type: "roundTrips" });
      if (reply.type !== "roundTrips") throw new Error("delay proxy: unexpected answer");
      return reply.count;
    },
    async close() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.send({ type: "close" });
      await exited;
    },
  };
}

/** The median of `samples` `select 1` through `proxied`, less the median direct, one connection each (ms). */
async function addedRoundTripMs(proxied: string, direct: string, samples = 300): Promise<number> {
  const median = async (connectionString: string) => {
    const client = new pg.Client({ connectionString });
    await client.connect();
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      await client.query("select 1");
      times.push(performance.now() - t0);
    }
    await client.end();
    return times.sort((a, b) => a - b)[Math.floor(samples / 2)]!;
  };
  return (await median(proxied)) - (await median(direct));
}
