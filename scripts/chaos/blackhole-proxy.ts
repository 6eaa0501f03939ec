// A TCP proxy in front of PostgreSQL that can blackhole connections: it stops forwarding (holding
// the bytes, the sockets stay open, nothing errors) and later delivers everything late. A worker
// behind it sends a statement before its deadline that reaches the server after another owner
// took the run over: only the fence can refuse it.
import net from "node:net";

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
  held: boolean;
  queued: { to: net.Socket; data: Buffer }[];
}

export interface BlackholeProxy {
  port: number;
  /** Holds a random share of the open connections for `ms`, then delivers what they held. */
  blackhole(share: number, ms: number, random: () => number): number;
  close(): Promise<void>;
}

export async function startBlackholeProxy(target = { host: "127.0.0.1", port: 5432 }): Promise<BlackholeProxy> {
  const pairs = new Set<Pair>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    const pair: Pair = { client, upstream, held: false, queued: [] };
    pairs.add(pair);
    const forward = (to: net.Socket) => (data: Buffer) => (pair.held ? pair.queued.push({ to, data }) : to.write(data));
    client.on("data", forward(upstream));
    upstream.on("data", forward(client));
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    blackhole(share, ms, random) {
      const chosen = [...pairs].filter((p) => !p.held && random() < share);
      for (const pair of chosen) pair.held = true;
      setTimeout(() => {
        for (const pair of chosen) {
          pair.held = false;
          for (const { to, data } of pair.queued.splice(0)) if (!to.destroyed) to.write(data);
        }
      }, ms);
      return chosen.length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of pairs) pair.client.destroy();
        server.close(() => resolve());
      }),
  };
}
