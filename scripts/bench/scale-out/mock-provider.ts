// The mock provider the scale-out bench's runs call (scripts/bench/scale-out.ts).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { PROVIDER_MS } from "./settings";

/** A plain node:http server that answers every request after PROVIDER_MS, counting them. */
export class MockProvider {
  requests = 0;
  inFlight = 0;
  maxInFlight = 0;
  readonly perRun = new Map<string, number>();
  readonly tenants = new Map<string, { now: number; max: number }>();
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<MockProvider> {
    let provider: MockProvider | undefined;
    const server = http.createServer((request, response) => provider!.answer(request, response));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => server.listen(0, "127.0.0.1", resolve).once("error", reject));
    provider = new MockProvider(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return provider;
  }

  private answer(request: http.IncomingMessage, response: http.ServerResponse) {
    request.resume();
    const query = new URL(request.url ?? "/", "http://provider").searchParams;
    const run = query.get("run") ?? "";
    const tenant = query.get("tenant");
    this.requests++;
    this.perRun.set(run, (this.perRun.get(run) ?? 0) + 1);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const key = tenant === null ? null : (this.tenants.get(tenant) ?? { now: 0, max: 0 });
    if (key && tenant !== null) {
      key.now++;
      key.max = Math.max(key.max, key.now);
      this.tenants.set(tenant, key);
    }
    setTimeout(() => {
      this.inFlight--;
      if (key) key.now--;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ ok: true }));
    }, PROVIDER_MS);
  }

  reset() {
    this.requests = 0;
    this.maxInFlight = this.inFlight;
    this.perRun.clear();
    this.tenants.clear();
  }

  /** Runs whose provider was called more than once. */
  duplicates(): number {
    return [...this.perRun.values()].filter((n) => n > 1).length;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
