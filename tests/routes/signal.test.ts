import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { MAX_BODY_BYTES } from "@/lib/durable/next";
import { signWebhook } from "@/lib/durable/auth/webhook";
import {
  admin,
  approval,
  createFixture,
  expectRefused,
  fingerprint,
  greet,
  jsonRequest,
  OLD_SIGNAL_KEY,
  SECRETS,
  SIGNAL_KEY,
  signedSignal,
  url,
  whsec,
  type RouteFixture,
} from "./harness";

let fx: RouteFixture;
beforeAll(async () => {
  fx = await createFixture();
});
afterAll(() => fx.durable.close());
afterEach(() => {
  vi.unstubAllEnvs();
});

let counter = 0;
/** A fresh run of `approval` (declares the `decision` signal), not yet advanced: it accepts signals. */
async function freshRun(): Promise<string> {
  const id = `approval-${++counter}`;
  await fx.durable.start(approval, { docId: id }, { id });
  return id;
}
const decision = (runId: string, payload: unknown = { approved: true }) =>
  JSON.stringify({ runId, name: "decision", payload });
const signalRows = (runId: string) =>
  fx.db.selectFrom("durable_signals").selectAll().where("run_id", "=", runId).execute();

describe("POST /api/durable/signal: Standard Webhooks", () => {
  it("delivers a signed signal (202), keeps webhook-id as the delivery id, and advances the run", async () => {
    const runId = await freshRun();
    const response = await fx.routes.signal.POST(signedSignal(decision(runId), { id: "evt-1" }));
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ ok: true, signalled: true, alreadyDelivered: false });
    await fx.routes.idle();
    const rows = await signalRows(runId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ name: "decision", payload: { approved: true }, delivery_id: "evt-1" });
    expect((await fx.durable.status(runId))?.status).toBe("completed");
  });

  it("answers a replayed webhook-id with the same 2xx and writes nothing, whatever the run's state now", async () => {
    const runId = await freshRun();
    const body = decision(runId);
    const timestamp = Math.floor(Date.now() / 1000);
    expect((await fx.routes.signal.POST(signedSignal(body, { id: "evt-replay", timestamp }))).status).toBe(202);
    await fx.routes.idle();
    const before = await fingerprint(fx.db);
    for (let i = 0; i < 2; i++) {
      const replay = await fx.routes.signal.POST(signedSignal(body, { id: "evt-replay", timestamp }));
      expect(replay.status).toBe(202);
      expect(await replay.json()).toEqual({ ok: true, signalled: false, alreadyDelivered: true });
      await fx.routes.idle();
    }
    expect(await fingerprint(fx.db)).toEqual(before);
    expect(await signalRows(runId)).toHaveLength(1);
  });

  it("accepts a header whose second signature is the valid one", async () => {
    const runId = await freshRun();
    const response = await fx.routes.signal.POST(
      signedSignal(decision(runId), { extraSignatures: ["v1,Zm9vYmFyYmF6", "v1a,AAAA"] }),
    );
    expect(response.status).toBe(202);
    await fx.routes.idle();
  });

  it("accepts the previous key during a rotation and refuses it once removed", async () => {
    const rotating = fx.routesWith({
      secrets: { ...SECRETS, signal: `${whsec(SIGNAL_KEY)},${whsec(OLD_SIGNAL_KEY)}` },
    });
    const runId = await freshRun();
    expect((await rotating.signal.POST(signedSignal(decision(runId), { keys: [OLD_SIGNAL_KEY] }))).status).toBe(202);
    await rotating.idle();
    const other = await freshRun();
    await expectRefused(
      fx,
      () => fx.routes.signal.POST(signedSignal(decision(other), { keys: [OLD_SIGNAL_KEY] })),
      401,
      "unauthorized",
    );
  });

  describe("refuses with 401 and changes nothing", () => {
    let runId: string;
    beforeAll(async () => {
      runId = await freshRun();
    });
    const refuse = (request: () => Request) =>
      expectRefused(fx, () => fx.routes.signal.POST(request()), 401, "unauthorized");

    it.each(["webhook-id", "webhook-timestamp", "webhook-signature"])("a delivery without %s", async (header) => {
      await refuse(() => signedSignal(decision(runId), { omit: [header] }));
    });

    it("a delivery without any header or bearer", async () => {
      await refuse(() => jsonRequest("/signal", decision(runId)));
      await refuse(() => jsonRequest("/signal", decision(runId), { "user-agent": "vercel-cron/1.0" }));
    });

    it("bad base64, a wrong key, an unversioned signature", async () => {
      const request = (signature: string) =>
        new Request(url("/signal"), {
          method: "POST",
          headers: {
            "webhook-id": "m1",
            "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
            "webhook-signature": signature,
          },
          body: decision(runId),
        });
      await refuse(() => request("v1,!!!not base64!!!"));
      await refuse(() => request("v1,"));
      await refuse(() => signedSignal(decision(runId), { keys: [Buffer.from("some-other-key-some-other-key-00")] }));
      const now = Math.floor(Date.now() / 1000);
      await refuse(() => request(signWebhook(SIGNAL_KEY, "m1", now, decision(runId)).slice(3)));
    });

    it("a body with one byte changed after signing", async () => {
      const body = decision(runId);
      const signed = signedSignal(body, { id: "m-tampered" });
      const tampered = body.replace('"approved":true', '"approved":trUe');
      expect(tampered).not.toBe(body);
      await refuse(() => new Request(signed.url, { method: "POST", headers: signed.headers, body: tampered }));
    });

    it.each([301, -301])("a timestamp %i s away", async (offset) => {
      await refuse(() => signedSignal(decision(runId), { timestamp: Math.floor(Date.now() / 1000) + offset }));
    });

    it("the cron secret or a status token as bearer", async () => {
      await refuse(() => jsonRequest("/signal", decision(runId), { authorization: `Bearer ${SECRETS.cron}` }));
      await refuse(() =>
        jsonRequest("/signal", decision(runId), { authorization: `Bearer ${fx.durable.statusToken(runId)}` }),
      );
    });
  });

  it("keeps the ±300 s window at its edges", async () => {
    const now = 1_900_000_000;
    const routes = fx.routesWith({ nowSeconds: () => now });
    for (const offset of [300, -300]) {
      const runId = await freshRun();
      expect((await routes.signal.POST(signedSignal(decision(runId), { timestamp: now + offset }))).status).toBe(202);
    }
    await routes.idle();
  });
});

describe("POST /api/durable/signal: bad input", () => {
  it("refuses an oversize body with 413 before any HMAC, signed or not", async () => {
    const runId = await freshRun();
    const big = decision(runId, { approved: true, pad: "x".repeat(MAX_BODY_BYTES) });
    await expectRefused(fx, () => fx.routes.signal.POST(signedSignal(big)), 413, "payload_too_large");
    // Unsigned, with no headers at all: still 413, not 401, so the cap runs first.
    await expectRefused(
      fx,
      () => fx.routes.signal.POST(new Request(url("/signal"), { method: "POST", body: big })),
      413,
      "payload_too_large",
    );
    const streamed = new Request(url("/signal"), {
      method: "POST",
      body: new Blob([big]).stream(),
      duplex: "half",
    } as RequestInit);
    await expectRefused(fx, () => fx.routes.signal.POST(streamed), 413, "payload_too_large");
  });

  it("refuses invalid JSON with 400 (after the signature checks out)", async () => {
    await expectRefused(fx, () => fx.routes.signal.POST(signedSignal("{not json")), 400, "invalid_json");
    await expectRefused(fx, () => fx.routes.signal.POST(signedSignal("")), 400, "invalid_json");
    await expectRefused(fx, () => fx.routes.signal.POST(jsonRequest("/signal", "[1,", admin)), 400, "invalid_json");
  });

  it("refuses a request that fails the request schema with 422 and its issues", async () => {
    const runId = await freshRun();
    for (const body of [
      {},
      { runId },
      { runId, name: "" },
      { runId: 7, name: "decision" },
      { runId: "x".repeat(256), name: "decision" },
      { runId: "a\u0000", name: "decision" },
    ]) {
      const refused = await expectRefused(
        fx,
        () => fx.routes.signal.POST(signedSignal(JSON.stringify(body))),
        422,
        "invalid_input",
      );
      expect(Array.isArray(refused.error.issues)).toBe(true);
    }
  });

  it("refuses a payload failing the signal's schema, or an undeclared signal, with 422", async () => {
    const runId = await freshRun();
    await expectRefused(
      fx,
      () => fx.routes.signal.POST(signedSignal(decision(runId, { approved: "yes" }))),
      422,
      "invalid_input",
    );
    await expectRefused(fx, () => fx.routes.signal.POST(signedSignal(decision(runId, null))), 422, "invalid_input");
    const undeclared = JSON.stringify({ runId, name: "other", payload: {} });
    await expectRefused(fx, () => fx.routes.signal.POST(signedSignal(undeclared)), 422, "invalid_input");
  });

  it("refuses an unknown run with 404 and a terminal run with 409", async () => {
    await expectRefused(fx, () => fx.routes.signal.POST(signedSignal(decision("no-such-run"))), 404, "run_not_found");
    await fx.durable.start(greet, { name: "done" }, { id: "terminal-run" });
    await fx.durable.advance("terminal-run");
    expect((await fx.durable.status("terminal-run"))?.status).toBe("completed");
    const body = JSON.stringify({ runId: "terminal-run", name: "anything", payload: 1 });
    await expectRefused(fx, () => fx.routes.signal.POST(signedSignal(body)), 409, "run_state_conflict");
  });

  it("keeps a delivery after a wait's deadline in the mailbox (202) without answering the timed-out wait", async () => {
    // A fixture of its own: moving its database clock must not move the other tests'.
    const own = await createFixture();
    try {
      await own.durable.start(approval, { docId: "late" }, { id: "late" });
      await own.durable.advance("late");
      expect((await own.durable.status("late"))?.waitingFor).toEqual({ kind: "signal", name: "decision" });
      await own.durable.testing.advanceClock("61m");
      const response = await own.routes.signal.POST(signedSignal(decision("late")));
      expect(response.status).toBe(202);
      expect(await response.json()).toEqual({ ok: true, signalled: true, alreadyDelivered: false });
      await own.routes.idle();
      const status = await own.durable.status("late");
      expect(status?.steps.find((step) => step.id === "decision")).toMatchObject({ status: "completed" });
      const taken = await sql<{ taken_by: string | null }>`select taken_by from durable_signals`.execute(own.db);
      expect(taken.rows).toEqual([{ taken_by: null }]);
    } finally {
      await own.durable.close();
    }
  });

  it("answers other methods with 405", async () => {
    for (const method of ["GET", "PUT", "PATCH", "DELETE"] as const) {
      const response = await fx.routes.signal[method](new Request(url("/signal"), { method, headers: admin }));
      expect(response.headers.get("allow")).toBe("POST");
      await expectRefused(fx, async () => response, 405, "method_not_allowed");
    }
  });

  it("fails closed with 503 in production when DURABLE_SIGNAL_SECRET is unset", async () => {
    const routes = fx.routesWith({ secrets: { durable: SECRETS.durable, cron: SECRETS.cron } });
    vi.stubEnv("NODE_ENV", "production");
    vi.stubEnv("DURABLE_SIGNAL_SECRET", undefined);
    const runId = await freshRun();
    await expectRefused(fx, () => routes.signal.POST(signedSignal(decision(runId))), 503, "secret_missing", routes);
  });
});

describe("POST /api/durable/signal: admin bearer", () => {
  it("delivers with the admin bearer, deduplicating on the body's id", async () => {
    const runId = await freshRun();
    const body = JSON.stringify({ runId, name: "decision", payload: { approved: false }, id: "admin-1" });
    const first = await fx.routes.signal.POST(jsonRequest("/signal", body, admin));
    expect(first.status).toBe(202);
    expect(await first.json()).toMatchObject({ signalled: true, alreadyDelivered: false });
    await fx.routes.idle();
    const again = await fx.routes.signal.POST(jsonRequest("/signal", body, admin));
    expect(again.status).toBe(202);
    expect(await again.json()).toMatchObject({ signalled: false, alreadyDelivered: true });
  });

  it("refuses a wrong admin bearer with 401", async () => {
    const runId = await freshRun();
    await expectRefused(
      fx,
      () => fx.routes.signal.POST(jsonRequest("/signal", decision(runId), { authorization: "Bearer nope" })),
      401,
      "unauthorized",
    );
    await expectRefused(
      fx,
      () =>
        fx.routes.signal.POST(jsonRequest("/signal", decision(runId), { authorization: `Bearer  ${SECRETS.durable}` })),
      401,
      "unauthorized",
    );
  });
});
