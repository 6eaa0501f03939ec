import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { MAX_BODY_BYTES } from "@/lib/durable/next";
import { runStatusSchema } from "@/lib/durable/schemas";
import {
  admin,
  approval,
  createFixture,
  exclusive,
  expectRefused,
  fingerprint,
  flakiness,
  flaky,
  greet,
  jsonRequest,
  params,
  url,
  type RouteFixture,
} from "./harness";

let fx: RouteFixture;
beforeAll(async () => {
  fx = await createFixture();
});
afterAll(() => fx.durable.close());

const start = (body: unknown, headers: Record<string, string> = admin) =>
  fx.routes.runs.POST(jsonRequest("/runs", body, headers));
const get = (id: string, headers: Record<string, string> = {}) =>
  fx.routes.run.GET(new Request(url(`/runs/${encodeURIComponent(id)}`), { headers }), params(id));
const notFoundBody = (id: string) => ({ error: { code: "run_not_found", message: `run "${id}" not found` } });

describe("POST /api/durable/runs (start)", () => {
  it("starts a run (201), answers the same id again with 200, and advances it right after answering", async () => {
    const keptAlive: Promise<unknown>[] = [];
    const routes = fx.routesWith({ waitUntil: (p) => void keptAlive.push(p) });
    const first = await routes.runs.POST(
      jsonRequest("/runs", { workflow: "greet", input: { name: "ada" }, id: "start-1" }, admin),
    );
    expect(first.status).toBe(201);
    const body = await first.json();
    expect(body).toEqual({
      id: "start-1",
      created: true,
      status: "pending",
      statusToken: fx.durable.statusToken("start-1"),
    });
    // Handed to waitUntil, but it runs without it too (waitUntil does nothing off Vercel).
    expect(keptAlive).toHaveLength(1);
    await routes.idle();
    expect((await fx.durable.status("start-1"))?.status).toBe("completed");

    const again = await routes.runs.POST(
      jsonRequest("/runs", { workflow: "greet", input: { name: "ada" }, id: "start-1" }, admin),
    );
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id: "start-1", created: false, status: "completed" });
    expect(keptAlive).toHaveLength(1); // nothing left to advance

    // The same id with another input is another run: 409, and nothing changes.
    await expectRefused(
      fx,
      () => routes.runs.POST(jsonRequest("/runs", { workflow: "greet", input: { name: "bob" }, id: "start-1" }, admin)),
      409,
      "run_state_conflict",
    );
  });

  it("generates an id when none is given", async () => {
    const response = await start({ workflow: "greet", input: { name: "x" } });
    expect(response.status).toBe(201);
    expect((await response.json()).id).toMatch(/^[0-9a-f-]{36}$/);
    await fx.routes.idle();
  });

  it("stores injection-looking ids and inputs as data", async () => {
    const ids = [
      "'; drop table durable_runs; --",
      "$1",
      "../../etc/passwd",
      "<script>alert(1)</script>",
      "🙂 ∑",
      "a%00b",
    ];
    for (const id of ids) {
      const response = await start({ workflow: "greet", input: { name: "x'); delete from durable_steps; --" }, id });
      expect(response.status).toBe(201);
      await fx.routes.idle();
      const status = await get(id, admin);
      expect(status.status).toBe(200);
      expect((await status.json()).id).toBe(id);
    }
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from durable_runs`.execute(fx.db);
    expect(rows[0]!.n).toBeGreaterThan(0);
    // Postgres text cannot hold NUL: refused as input, and no run can have such an id.
    await expectRefused(
      fx,
      () => start({ workflow: "greet", input: { name: "x" }, id: "run\u0000" }),
      422,
      "invalid_input",
    );
    await expectRefused(
      fx,
      () => start({ workflow: "greet", input: { name: "a\u0000b" }, id: "nul-input" }),
      422,
      "invalid_input",
    );
    await expectRefused(fx, () => get("run\u0000", admin), 404, "run_not_found");
  });

  it.each([
    ["no bearer", {}, 401, "unauthorized"],
    ["a wrong bearer", { authorization: "Bearer nope" }, 401, "unauthorized"],
    ["a status token instead of the admin secret", { authorization: "Bearer STATUS" }, 401, "unauthorized"],
    ["the cron secret", { authorization: "Bearer test-cron-secret" }, 401, "unauthorized"],
  ] as [string, Record<string, string>, number, string][])("refuses %s", async (_, headers, status, code) => {
    const auth =
      headers.authorization === "Bearer STATUS"
        ? { authorization: `Bearer ${fx.durable.statusToken("start-x")}` }
        : headers;
    await expectRefused(
      fx,
      () => start({ workflow: "greet", input: { name: "x" }, id: "start-x" }, auth),
      status,
      code,
    );
  });

  it("refuses bad input without touching the database", async () => {
    await expectRefused(fx, () => start("{not json"), 400, "invalid_json");
    await expectRefused(fx, () => start(""), 400, "invalid_json");
    await expectRefused(
      fx,
      () =>
        fx.routes.runs.POST(
          new Request(url("/runs"), { method: "POST", headers: admin, body: new Uint8Array([0x7b, 0xff, 0x7d]) }),
        ),
      400,
      "invalid_json",
    );
    const schema = await expectRefused(fx, () => start({ input: {} }), 422, "invalid_input");
    expect(schema.error.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: ["workflow"] })]));
    await expectRefused(fx, () => start({ workflow: "greet", id: "" }), 422, "invalid_input");
    await expectRefused(fx, () => start({ workflow: "nope", input: {} }), 404, "workflow_not_found");
    const input = await expectRefused(
      fx,
      () => start({ workflow: "greet", input: { name: 42 }, id: "bad-input" }),
      422,
      "invalid_input",
    );
    expect(input.error.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: ["name"] })]));
    await expectRefused(
      fx,
      () => start({ workflow: "greet", input: { name: "x" }, id: "x".repeat(256) }),
      422,
      "invalid_input",
    );
  });

  it("refuses an id taken by another workflow with 409", async () => {
    await fx.durable.start(approval, { docId: "d" }, { id: "taken" });
    await expectRefused(
      fx,
      () => start({ workflow: "greet", input: { name: "x" }, id: "taken" }),
      409,
      "run_state_conflict",
    );
  });

  it("refuses a second active run of a singleton key with 409 naming the active run", async () => {
    await fx.durable.start(exclusive, { branch: "main" }, { id: "reset-main-1" });
    const body = await expectRefused(
      fx,
      () => start({ workflow: "exclusive", input: { branch: "main" }, id: "reset-main-2" }),
      409,
      "run_state_conflict",
    );
    expect(body.error).toMatchObject({ activeRunId: "reset-main-1" });
    expect(body.error.message).toContain('"reset-main-1"');
    await fx.durable.cancel("reset-main-1");
    expect((await start({ workflow: "exclusive", input: { branch: "main" }, id: "reset-main-2" })).status).toBe(201);
    await fx.routes.idle(); // the advance after the answer
  });

  it("refuses a body over 256 KiB with 413, whether or not it declares its length", async () => {
    const big = JSON.stringify({ workflow: "greet", input: { name: "x".repeat(MAX_BODY_BYTES) } });
    await expectRefused(fx, () => start(big), 413, "payload_too_large");
    await expectRefused(fx, () => start(big, {}), 413, "payload_too_large");
    const streamed = new Request(url("/runs"), {
      method: "POST",
      headers: admin,
      body: new Blob([big]).stream(),
      duplex: "half",
    } as RequestInit);
    expect(streamed.headers.get("content-length")).toBeNull();
    await expectRefused(fx, () => fx.routes.runs.POST(streamed), 413, "payload_too_large");
    const lying = new Request(url("/runs"), {
      method: "POST",
      headers: { ...admin, "content-length": "10" },
      body: big,
    });
    await expectRefused(fx, () => fx.routes.runs.POST(lying), 413, "payload_too_large");
  });

  it("answers other methods with 405", async () => {
    for (const method of ["PUT", "PATCH", "DELETE"] as const) {
      const response = await fx.routes.runs[method](new Request(url("/runs"), { method, headers: admin }));
      expect(response.headers.get("allow")).toBe("GET, POST");
      await expectRefused(fx, async () => response, 405, "method_not_allowed");
    }
  });
});

describe("GET /api/durable/runs (list)", () => {
  it("lists runs for the admin, newest first, with filters", async () => {
    await fx.durable.start(greet, { name: "l" }, { id: "list-1" });
    const response = await fx.routes.runs.GET(
      new Request(url("/runs?workflow=greet&status=pending&limit=200"), { headers: admin }),
    );
    expect(response.status).toBe(200);
    const page = await response.json();
    expect(page.runs.map((r: { id: string }) => r.id)).toContain("list-1");
    expect(
      page.runs.every((r: { workflow: string; status: string }) => r.workflow === "greet" && r.status === "pending"),
    ).toBe(true);
  });

  it("refuses without the admin bearer and with bad query values", async () => {
    await expectRefused(fx, () => fx.routes.runs.GET(new Request(url("/runs"))), 401, "unauthorized");
    await expectRefused(
      fx,
      () => fx.routes.runs.GET(new Request(url(`/runs?secret=test-durable-secret`))),
      401,
      "unauthorized",
    );
    for (const query of ["limit=0", "limit=201", "limit=abc", "limit=1.5", "status=sleeping", "cursor=garbage"]) {
      await expectRefused(
        fx,
        () => fx.routes.runs.GET(new Request(url(`/runs?${query}`), { headers: admin })),
        422,
        "invalid_input",
      );
    }
  });
});

describe("GET /api/durable/runs/{id} (status)", () => {
  beforeAll(async () => {
    await fx.durable.start(greet, { name: "s" }, { id: "status-1" });
    await fx.durable.start(greet, { name: "t" }, { id: "status-2" });
  });

  it("answers the run's status token and the admin secret, never cached", async () => {
    for (const token of [fx.durable.statusToken("status-1"), "test-durable-secret"]) {
      const response = await get("status-1", { authorization: `Bearer ${token}` });
      expect(response.status).toBe(200);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(runStatusSchema.parse(await response.json()).id).toBe("status-1");
    }
    await fx.routes.idle();
  });

  it("answers unknown, token-less, wrong and another run's token with the same 404", async () => {
    const cases: [string, Record<string, string>][] = [
      ["unknown-run", admin],
      ["unknown-run", { authorization: `Bearer ${fx.durable.statusToken("unknown-run")}` }],
      ["status-2", {}],
      ["status-2", { authorization: "Bearer wrong" }],
      ["status-2", { authorization: `Bearer ${fx.durable.statusToken("status-1")}` }],
      ["status-2", { authorization: `Bearer  ${fx.durable.statusToken("status-2")}` }],
      ["status-2", { cookie: `token=${fx.durable.statusToken("status-2")}` }],
      ["status-2", { authorization: "Bearer test-cron-secret" }],
    ];
    for (const [id, headers] of cases) {
      const response = await get(id, headers);
      expect(response.headers.get("cache-control")).toBe("no-store");
      const body = await expectRefused(fx, async () => response, 404);
      expect(body).toEqual(notFoundBody(id));
    }
  });

  it("heals an expired lease only after authorisation, then advances the run after answering", async () => {
    await fx.durable.start(greet, { name: "h" }, { id: "heal-1" });
    // A dead owner: running, lease expired a minute ago by the database clock.
    await sql`update durable_runs set status = 'running', fence = fence + 1,
                lease_until = durable_now() - interval '1 minute', wake_at = durable_now() - interval '1 minute'
              where id = 'heal-1'`.execute(fx.db);
    await expectRefused(fx, () => get("heal-1", { authorization: "Bearer wrong" }), 404, "run_not_found");
    await expectRefused(fx, () => get("heal-1"), 404, "run_not_found");
    expect(
      (await fx.db.selectFrom("durable_runs").select("status").where("id", "=", "heal-1").executeTakeFirstOrThrow())
        .status,
    ).toBe("running");

    const before = await fingerprint(fx.db);
    const response = await get("heal-1", { authorization: `Bearer ${fx.durable.statusToken("heal-1")}` });
    expect(response.status).toBe(200);
    expect((await response.json()).status).toBe("pending");
    await fx.routes.idle();
    expect(await fingerprint(fx.db)).not.toEqual(before);
    const events = await fx.db.selectFrom("durable_events").select("kind").where("run_id", "=", "heal-1").execute();
    expect(events.map((e) => e.kind)).toContain("heal");
    expect((await fx.durable.status("heal-1"))?.status).toBe("completed");
  });

  it("spends no claim on a run that is not due: reads first, advances only a due run", async () => {
    await fx.durable.start(approval, { docId: "w" }, { id: "not-due" });
    await fx.durable.advance("not-due"); // now waiting for "decision", with a deadline an hour away
    const advance = vi.spyOn(fx.durable, "advance");
    try {
      const token = { authorization: `Bearer ${fx.durable.statusToken("not-due")}` };
      for (let i = 0; i < 3; i++) expect((await get("not-due", token)).status).toBe(200);
      await fx.routes.idle();
      expect(advance).not.toHaveBeenCalled();
      // Due again (the deadline passed by the database clock): the next read advances it.
      await fx.durable.testing.advanceClock("61m");
      expect((await get("not-due", token)).status).toBe(200);
      await fx.routes.idle();
      expect(advance).toHaveBeenCalledTimes(1);
    } finally {
      advance.mockRestore();
    }
  });

  it("answers other methods with 405", async () => {
    const response = await fx.routes.run.POST(
      new Request(url("/runs/status-1"), { method: "POST", headers: admin }),
      params("status-1"),
    );
    await expectRefused(fx, async () => response, 405, "method_not_allowed");
  });
});

describe("POST /api/durable/runs/{id}/cancel and /retry", () => {
  const cancel = (id: string, body?: string, headers: Record<string, string> = admin) =>
    fx.routes.cancel.POST(
      new Request(url(`/runs/${id}/cancel`), { method: "POST", headers, ...(body === undefined ? {} : { body }) }),
      params(id),
    );
  const retry = (id: string, headers: Record<string, string> = admin) =>
    fx.routes.retry.POST(new Request(url(`/runs/${id}/retry`), { method: "POST", headers }), params(id));

  it("cancels a run for the admin and refuses a second cancel with 409", async () => {
    await fx.durable.start(greet, { name: "c" }, { id: "cancel-1" });
    await expectRefused(fx, () => cancel("cancel-1", undefined, {}), 401, "unauthorized");
    await expectRefused(
      fx,
      () => cancel("cancel-1", undefined, { authorization: `Bearer ${fx.durable.statusToken("cancel-1")}` }),
      401,
      "unauthorized",
    );
    await expectRefused(fx, () => cancel("cancel-1", "{oops"), 400, "invalid_json");
    await expectRefused(fx, () => cancel("cancel-1", JSON.stringify({ reason: 7 })), 422, "invalid_input");
    await expectRefused(fx, () => cancel("cancel-1", JSON.stringify({ children: "drop" })), 422, "invalid_input");
    await expectRefused(fx, () => cancel("no-such-run"), 404, "run_not_found");
    const response = await cancel("cancel-1", JSON.stringify({ reason: "changed my mind" }));
    expect(response.status).toBe(200);
    expect(runStatusSchema.parse(await response.json()).status).toBe("cancelled");
    await expectRefused(fx, () => cancel("cancel-1"), 409, "run_state_conflict");
  });

  it("retries a failed run, keeps the route thin, and advances it after answering", async () => {
    flakiness.fail = true;
    await fx.durable.start(flaky, {}, { id: "retry-1" });
    await fx.durable.advance("retry-1");
    expect((await fx.durable.status("retry-1"))?.status).toBe("failed");
    await expectRefused(fx, () => retry("retry-1", {}), 401, "unauthorized");
    await expectRefused(fx, () => retry("no-such-run"), 404, "run_not_found");
    await fx.durable.start(greet, { name: "r" }, { id: "retry-not-failed" });
    await expectRefused(fx, () => retry("retry-not-failed"), 409, "run_state_conflict");

    flakiness.fail = false;
    const response = await retry("retry-1");
    expect(response.status).toBe(200);
    expect(runStatusSchema.parse(await response.json()).status).not.toBe("failed");
    await fx.routes.idle();
    expect((await fx.durable.status("retry-1"))?.status).toBe("completed");
  });

  it("answers other methods with 405", async () => {
    const response = await fx.routes.cancel.GET(new Request(url("/runs/x/cancel"), { headers: admin }), params("x"));
    await expectRefused(fx, async () => response, 405, "method_not_allowed");
    const other = await fx.routes.retry.DELETE(
      new Request(url("/runs/x/retry"), { method: "DELETE", headers: admin }),
      params("x"),
    );
    await expectRefused(fx, async () => other, 405, "method_not_allowed");
  });
});
