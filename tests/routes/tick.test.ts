import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { tickReportSchema } from "@/lib/durable/schemas";
import { createFixture, expectRefused, greet, SECRETS, url, type RouteFixture } from "./harness";

let fx: RouteFixture;
beforeAll(async () => {
  fx = await createFixture();
});
afterAll(() => fx.durable.close());
afterEach(() => {
  vi.unstubAllEnvs();
});

const tick = (headers: Record<string, string> = {}, path = "/tick", method = "GET") =>
  new Request(url(path), { method, headers });

describe("GET /api/durable/tick: auth", () => {
  // A due run is waiting in every case below, so a tick that wrongly ran would change the database.
  beforeEach(async () => {
    await fx.durable.start(greet, { name: "due" }, { id: `due-${Math.random()}` });
  });

  it.each([
    ["no header", {}],
    ["a wrong bearer", { authorization: "Bearer not-the-secret" }],
    ["a bearer with an extra space", { authorization: `Bearer  ${SECRETS.cron}` }],
    ["the secret without the scheme", { authorization: SECRETS.cron }],
    ["another scheme", { authorization: `Basic ${SECRETS.cron}` }],
    ["a bearer of the admin secret", { authorization: `Bearer ${SECRETS.durable}` }],
    ["a prefix of the secret", { authorization: `Bearer ${SECRETS.cron.slice(0, -1)}` }],
    ["the secret in a cookie", { cookie: `CRON_SECRET=${SECRETS.cron}; authorization=Bearer ${SECRETS.cron}` }],
    ["a vercel-cron user agent without bearer", { "user-agent": "vercel-cron/1.0" }],
  ] as [string, Record<string, string>][])("refuses %s with 401 and changes nothing", async (_, headers) => {
    await expectRefused(fx, () => fx.routes.tick.GET(tick(headers)), 401, "unauthorized");
  });

  it("refuses the secret in the query string", async () => {
    const path = `/tick?secret=${SECRETS.cron}&CRON_SECRET=${SECRETS.cron}&authorization=Bearer%20${SECRETS.cron}`;
    await expectRefused(
      fx,
      () => fx.routes.tick.GET(tick({ "user-agent": "vercel-cron/1.0" }, path)),
      401,
      "unauthorized",
    );
  });

  it("answers every other method with 405 and an allow header", async () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"] as const) {
      const request = tick({ authorization: `Bearer ${SECRETS.cron}` }, "/tick", method);
      const response = await fx.routes.tick[method](request);
      expect(response.headers.get("allow")).toBe("GET");
      await expectRefused(fx, async () => response, 405, "method_not_allowed");
    }
  });

  it("fails closed with 503 in production when CRON_SECRET is unset, and works once it is set", async () => {
    const routes = fx.routesWith({ secrets: { durable: SECRETS.durable, signal: SECRETS.signal } });
    vi.stubEnv("NODE_ENV", "production");
    vi.stubEnv("CRON_SECRET", undefined);
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Bearer dev-cron-secret" },
      { authorization: "Bearer " },
    ];
    for (const headers of attempts) {
      const body = await expectRefused(fx, () => routes.tick.GET(tick(headers)), 503, "secret_missing", routes);
      expect(body.error.message).toMatch(/CRON_SECRET/);
    }
    vi.stubEnv("CRON_SECRET", "from-the-environment");
    await expectRefused(
      fx,
      () => routes.tick.GET(tick({ authorization: "Bearer dev-cron-secret" })),
      401,
      "unauthorized",
      routes,
    );
    const ok = await routes.tick.GET(tick({ authorization: "Bearer from-the-environment" }));
    expect(ok.status).toBe(200);
  });
});

describe("GET /api/durable/tick: draining", () => {
  it("drains every due run within the budget and answers a TickReport", async () => {
    const ids = ["drain-1", "drain-2", "drain-3"];
    for (const id of ids) await fx.durable.start(greet, { name: id }, { id });
    const response = await fx.routes.tick.GET(
      tick({ authorization: `Bearer ${SECRETS.cron}`, "user-agent": "vercel-cron/1.0" }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const report = tickReportSchema.parse(await response.json());
    expect(report.completed).toBeGreaterThanOrEqual(3);
    expect(report.budgetLeftMs).toBeGreaterThan(0);
    for (const id of ids) expect((await fx.durable.status(id))?.status).toBe("completed");
  });

  it("takes its budget from the platform's deadline when there is one", async () => {
    await fx.durable.start(greet, { name: "late" }, { id: "deadline-run" });
    // 3 s left: less than a default lease plus margin, so the tick must not claim anything.
    const routes = fx.routesWith({ getDeadline: () => new Date(Date.now() + 3000) });
    const response = await routes.tick.GET(tick({ authorization: `Bearer ${SECRETS.cron}` }));
    const report = tickReportSchema.parse(await response.json());
    expect(report.claimed).toBe(0);
    expect(report.budgetLeftMs).toBeLessThanOrEqual(3000);
    expect((await fx.durable.status("deadline-run"))?.status).toBe("pending");
  });

  it("without a platform deadline, budgets maxDuration minus the margin", async () => {
    const routes = fx.routesWith({ maxDuration: 60, budgetMarginMs: 5000 });
    const report = tickReportSchema.parse(
      await (await routes.tick.GET(tick({ authorization: `Bearer ${SECRETS.cron}` }))).json(),
    );
    expect(report.budgetLeftMs).toBeGreaterThan(50_000);
    expect(report.budgetLeftMs).toBeLessThanOrEqual(55_000);
  });
});
