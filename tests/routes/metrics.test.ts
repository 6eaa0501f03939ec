import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { defineWorkflow } from "@/lib/durable";
import { escapeLabelValue, PROMETHEUS_CONTENT_TYPE } from "@/lib/durable/http/prometheus";
import { admin, createFixture, expectRefused, greet, SECRETS, url, type RouteFixture } from "./harness";

/** A registered workflow whose name needs every escape of the format: backslash, quote, line feed. */
const ODD_NAME = 'odd \\ "flow"\nline two';
const odd = defineWorkflow({
  name: ODD_NAME,
  input: z.object({}),
  async run() {
    return 1;
  },
});

let fx: RouteFixture;
beforeAll(async () => {
  fx = await createFixture({}, [odd]);
});
afterAll(() => fx.durable.close());
afterEach(() => {
  vi.unstubAllEnvs();
});

const scrape = (headers: Record<string, string> = {}, method = "GET") =>
  new Request(url("/metrics"), { method, headers });

/** A sample line read back as the format defines it: name, labels (unescaped), value. */
function parseSample(line: string): { name: string; labels: Record<string, string>; value: number } {
  const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0];
  const labels: Record<string, string> = {};
  let i = name.length;
  if (line[i] === "{") {
    i++;
    while (line[i] !== "}") {
      const key = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i))![0];
      i += key.length;
      expect(line.slice(i, i + 2)).toBe('="');
      i += 2;
      let value = "";
      while (line[i] !== '"') {
        if (line[i] === "\\") {
          const next = line[i + 1];
          value += next === "n" ? "\n" : next;
          i += 2;
        } else value += line[i++];
      }
      labels[key] = value;
      i++;
      if (line[i] === ",") i++;
    }
    i++;
  }
  expect(line[i]).toBe(" ");
  return { name, labels, value: Number(line.slice(i + 1)) };
}

describe("GET /api/durable/metrics", () => {
  it.each([
    ["no header", {}],
    ["a wrong bearer", { authorization: "Bearer not-the-secret" }],
    ["the signal secret", { authorization: `Bearer ${SECRETS.signal}` }],
    ["the cron secret without the scheme", { authorization: SECRETS.cron }],
  ] as [string, Record<string, string>][])("refuses %s with 401", async (_, headers) => {
    await expectRefused(fx, () => fx.routes.metrics.GET(scrape(headers)), 401, "unauthorized");
  });

  it("answers every other method with 405", async () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"] as const) {
      const response = await fx.routes.metrics[method](scrape(admin, method));
      expect(response.headers.get("allow")).toBe("GET");
      await expectRefused(fx, async () => response, 405, "method_not_allowed");
    }
  });

  it("answers the cron and the admin bearer with Prometheus text: every figure of durable.metrics()", async () => {
    await fx.durable.start(greet, { name: "a" }, { id: `m-${Math.random()}` });
    await fx.durable.start(odd, {}, { id: `odd-${Math.random()}` });
    for (const bearer of [SECRETS.cron, SECRETS.durable]) {
      const response = await fx.routes.metrics.GET(scrape({ authorization: `Bearer ${bearer}` }));
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe(PROMETHEUS_CONTENT_TYPE);
      expect(response.headers.get("cache-control")).toBe("no-store");
      const text = await response.text();
      expect(text.endsWith("\n")).toBe(true);
      const lines = text.slice(0, -1).split("\n");
      // Every metric has its HELP and TYPE lines, then its samples: one sample a line, none split.
      for (const name of ["durable_runs", "durable_due_runs", "durable_oldest_due_run_age_seconds"]) {
        expect(lines).toContain(`# TYPE ${name} gauge`);
        expect(lines.some((l) => l.startsWith(`# HELP ${name} `))).toBe(true);
      }
      const samples = lines.filter((l) => !l.startsWith("#")).map(parseSample);
      const runs = samples.filter((s) => s.name === "durable_runs");
      expect(runs).toContainEqual({
        name: "durable_runs",
        labels: { workflow: ODD_NAME, status: "pending" },
        value: 1,
      });
      const read = await fx.durable.metrics();
      expect(
        runs.map((s) => ({ workflow: s.labels.workflow ?? null, status: s.labels.status, count: s.value })),
      ).toEqual(read.runs);
      expect(samples.find((s) => s.name === "durable_due_runs")?.value).toBe(read.due);
      expect(samples.find((s) => s.name === "durable_expired_leases")?.value).toBe(read.expiredLeases);
      expect(samples.find((s) => s.name === "durable_oldest_due_run_age_seconds")!.value).toBeGreaterThan(0);
    }
  });

  it("escapes backslash, double quote and line feed in label values, nothing else", () => {
    expect(escapeLabelValue('a\\b"c\nd\re')).toBe('a\\\\b\\"c\\nd\re');
  });

  it("takes the admin bearer in production with only DURABLE_SECRET set, and answers 503 with neither", async () => {
    vi.stubEnv("NODE_ENV", "production");
    vi.stubEnv("CRON_SECRET", undefined);
    vi.stubEnv("DURABLE_SECRET", undefined);
    const adminOnly = fx.routesWith({ secrets: { durable: SECRETS.durable } });
    expect((await adminOnly.metrics.GET(scrape(admin))).status).toBe(200);
    await expectRefused(fx, () => adminOnly.metrics.GET(scrape({ authorization: "Bearer dev-cron-secret" })), 401);
    const none = fx.routesWith({ secrets: {} });
    await expectRefused(fx, () => none.metrics.GET(scrape(admin)), 503, undefined, none);
  });
});
