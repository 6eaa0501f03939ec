// The local cron that instrumentation.ts starts under `next dev`: it calls the tick route with the
// cron bearer, once per process, and does nothing outside development.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startDevCron } from "@/lib/durable/next";
import { until } from "../helpers/until";

describe("startDevCron", () => {
  const calls: { path: string; bearer: string | undefined }[] = [];
  let answer: () => string = () => JSON.stringify({ claimed: 0, warnings: [] });
  const server = http.createServer((request, response) => {
    calls.push({ path: request.url ?? "", bearer: request.headers.authorization });
    response.setHeader("content-type", "application/json");
    response.end(answer());
  });
  let stop = () => {};

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    vi.stubEnv("__NEXT_PRIVATE_ORIGIN", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  afterEach(() => {
    stop();
    calls.length = 0;
    answer = () => JSON.stringify({ claimed: 0, warnings: [] });
    vi.stubEnv("NODE_ENV", "test");
    vi.stubEnv("DURABLE_DEV_CRON", "");
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await new Promise((resolve) => server.close(resolve));
  });

  it("calls the tick route with the cron bearer every interval under next dev, once per process", async () => {
    vi.stubEnv("NODE_ENV", "development");
    const messages: string[] = [];
    stop = startDevCron({ intervalMs: 30, secret: "cron-bearer", log: (m) => messages.push(m) });
    expect(startDevCron({ intervalMs: 30, secret: "another" })).toBe(stop);

    await until(() => calls.length >= 3);
    expect(calls.every((c) => c.path === "/api/durable/tick" && c.bearer === "Bearer cron-bearer")).toBe(true);
    expect(messages.filter((m) => m.startsWith("calling "))).toHaveLength(1);

    // A report that claimed something is printed; one that claimed nothing is not.
    answer = () => JSON.stringify({ claimed: 2, warnings: [] });
    await until(() => messages.some((m) => m.includes('"claimed":2')));

    stop();
    const after = calls.length;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(calls.length).toBeLessThanOrEqual(after + 1); // at most the call already in flight
  });

  it("says once that the route did not answer with a tick report", async () => {
    vi.stubEnv("NODE_ENV", "development");
    answer = () => "my own tick";
    const messages: string[] = [];
    stop = startDevCron({ intervalMs: 20, secret: "s", log: (m) => messages.push(m) });
    await until(() => calls.length >= 4);
    expect(messages.filter((m) => m.includes("not with a tick report"))).toHaveLength(1);
  });

  it("does nothing outside development, or when DURABLE_DEV_CRON=off", async () => {
    vi.stubEnv("NODE_ENV", "production");
    stop = startDevCron({ intervalMs: 10, secret: "s" });
    vi.stubEnv("NODE_ENV", "development");
    vi.stubEnv("DURABLE_DEV_CRON", "off");
    const off = startDevCron({ intervalMs: 10, secret: "s" });
    await new Promise((resolve) => setTimeout(resolve, 150));
    off();
    expect(calls).toEqual([]);
  });
});
