import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DurableRoutes } from "@/lib/durable/next";
import { signWebhook } from "@/lib/durable/auth/webhook";
import { approval, createFixture, fingerprint, greet, SECRETS, SIGNAL_KEY, url, type RouteFixture } from "./harness";

// A property fuzz over method, route, headers, path id and body: never a 5xx, and a request
// answered with 4xx never changes the database.
let fx: RouteFixture;
beforeAll(async () => {
  fx = await createFixture();
  await fx.durable.start(greet, { name: "fuzz" }, { id: "fuzz-done" });
  await fx.durable.advance("fuzz-done");
  await fx.durable.start(approval, { docId: "fuzz" }, { id: "fuzz-waiting" });
});
afterAll(() => fx.durable.close());

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
const ROUTES = ["tick", "signal", "runs", "run", "cancel", "retry"] as const;
const nasty = fc.constantFrom(
  "",
  " ",
  "\u0000",
  "'; drop table durable_runs; --",
  "$1",
  "%00",
  "../..",
  "🙂",
  "x".repeat(300),
  "constructor",
  "__proto__",
);
const runId = fc.oneof(fc.constantFrom("fuzz-done", "fuzz-waiting", "missing"), nasty, fc.string({ maxLength: 20 }));
const jsonValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant({ approved: true }), fc.constant(null));
const body = fc.oneof(
  fc.constant(undefined),
  fc.string({ maxLength: 50 }),
  fc
    .record(
      { runId, name: fc.oneof(fc.constantFrom("decision", "other"), nasty), payload: jsonValue },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  fc
    .record(
      { workflow: fc.oneof(fc.constantFrom("greet", "approval", "nope"), nasty), input: jsonValue, id: runId },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  fc.record({ reason: jsonValue }, { requiredKeys: [] }).map((v) => JSON.stringify(v)),
  jsonValue.map((v) => JSON.stringify(v)),
);
const auth = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(
    `Bearer ${SECRETS.durable}`,
    `Bearer ${SECRETS.cron}`,
    `Bearer  ${SECRETS.durable}`,
    "Bearer",
    "Basic abc",
    `bearer ${SECRETS.durable}`,
  ),
  fc.string({ maxLength: 30 }).map((s) => `Bearer ${s}`),
);
const query = fc.oneof(
  fc.constant(""),
  fc.constantFrom(
    "?limit=0",
    "?limit=5",
    "?status=failed",
    "?status=x",
    "?cursor=abc",
    "?workflow=greet",
    `?secret=${SECRETS.cron}`,
  ),
);

const admin = () => `Bearer ${SECRETS.durable}`;
const RIGHT: Record<(typeof ROUTES)[number], { methods: (typeof METHODS)[number][]; auth: (id: string) => string }> = {
  tick: { methods: ["GET"], auth: () => `Bearer ${SECRETS.cron}` },
  signal: { methods: ["POST"], auth: admin },
  runs: { methods: ["GET", "POST"], auth: admin },
  run: { methods: ["GET"], auth: (id) => `Bearer ${fx.durable.statusToken(id)}` },
  cancel: { methods: ["POST"], auth: admin },
  retry: { methods: ["POST"], auth: admin },
};

describe("HTTP property fuzz", () => {
  it("never answers 5xx and never changes the database on a 4xx", async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          anyMethod: fc.constantFrom(...METHODS),
          route: fc.constantFrom(...ROUTES),
          id: runId,
          body,
          anyAuth: auth,
          query,
          signed: fc.boolean(),
          ua: fc.boolean(),
          rightMethod: fc.integer({ min: 0, max: 9 }),
          rightAuth: fc.integer({ min: 0, max: 9 }),
        }),
        async ({ anyMethod, route, id, body, anyAuth, query, signed, ua, rightMethod, rightAuth }) => {
          // Mostly the route's own method and credential, so the fuzz gets past 405 and 401 often.
          const own = RIGHT[route];
          const method = rightMethod < 8 ? own.methods[rightMethod % own.methods.length]! : anyMethod;
          const auth = rightAuth < 6 ? own.auth(id) : anyAuth;
          const headers = new Headers();
          if (auth !== undefined) headers.set("authorization", auth);
          if (ua) headers.set("user-agent", "vercel-cron/1.0");
          if (signed) {
            const now = Math.floor(Date.now() / 1000);
            headers.set("webhook-id", `fuzz-${id.length}`);
            headers.set("webhook-timestamp", String(now));
            headers.set("webhook-signature", signWebhook(SIGNAL_KEY, `fuzz-${id.length}`, now, body ?? ""));
          }
          const hasBody = body !== undefined && method !== "GET";
          const path =
            route === "run"
              ? `/runs/${encodeURIComponent(id)}`
              : route === "cancel" || route === "retry"
                ? `/runs/${encodeURIComponent(id)}/${route}`
                : `/${route}`;
          const request = new Request(url(path + query), { method, headers, ...(hasBody ? { body } : {}) });
          const handler = (fx.routes[route] as DurableRoutes["run"])[method];
          const before = await fingerprint(fx.db);
          const response = await handler(request, { params: Promise.resolve({ id }) });
          await fx.routes.idle();
          seen.set(response.status, (seen.get(response.status) ?? 0) + 1);
          expect(response.status, `${method} ${path}${query}`).toBeLessThan(500);
          if (response.status >= 400) {
            const answer = await response.json();
            expect(answer.error).toEqual({
              code: expect.any(String),
              message: expect.any(String),
              ...(answer.error.issues ? { issues: expect.anything() } : {}),
            });
            expect(await fingerprint(fx.db)).toEqual(before);
          }
        },
      ),
      { numRuns: 250, seed: Number(process.env.FUZZ_SEED ?? 20261129) },
    );
    // The fuzz must reach past auth and parsing, or it proves little.
    const statuses = [...seen.keys()];
    expect(statuses.filter((status) => status < 300).length).toBeGreaterThan(0);
    expect(statuses).toEqual(expect.arrayContaining([400, 401, 404, 405, 422]));
  }, 120_000);
});
