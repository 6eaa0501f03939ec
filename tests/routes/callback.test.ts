// POST /api/durable/callback/{token}, the real handler over PGlite: the token is the whole
// credential; 202 delivered and the run woken, 200 for a repeat of the delivery's key, the same
// 404 for unknown, forged and malformed tokens, 409 once resolved, timed out or ended, 413, 422;
// every refusal changes no row (durable_callbacks included).
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { sql, type Kysely } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { type CallbackHandle, createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { callbackTokenFor } from "@/lib/durable/auth/callback-token";
import { MAX_CALLBACK_BYTES } from "@/lib/durable/engine/callbacks";
import { createDurableRoutes, type DurableRoutes } from "@/lib/durable/next";
import { createFixture, fingerprint, SECRETS, url, type RouteFixture } from "./harness";

/** Each run's callback URL, published by the workflow from inside a step (the URL is journaled nowhere). */
const urls = new Map<string, string>();

const approveByUrl = defineWorkflow({
  name: "approve-by-url",
  input: z.object({}),
  async run(ctx) {
    const cb = await ctx.step.callback("approve", { timeout: "1h", schema: z.object({ approved: z.boolean() }) });
    await ctx.step.run("publish", () => {
      urls.set(ctx.runId, cb.url);
      return null;
    });
    return ctx.step.waitForCallback(cb);
  },
});

/** Schemas JSON Schema cannot check exactly, declared for the delivery: [accepted, parsed, refused]. */
const declaredCases = {
  coerce: [z.object({ amount: z.coerce.number() }), { amount: "12.50" }, { amount: 12.5 }, { amount: "abc" }],
  preprocess: [z.preprocess((v) => (typeof v === "string" ? v.trim() : v), z.string().min(2)), "  ok ", "ok", " a "],
  transform: [z.string().transform((v) => v.length), "abcd", 4, 5],
  refine: [z.number().refine((n) => n % 2 === 0, "an even number"), 4, 4, 3],
  pipe: [z.string().pipe(z.coerce.number<string>().int()), "42", 42, "4.5"],
  default: [z.object({ n: z.number().default(7) }), {}, { n: 7 }, { n: "x" }],
  catch: [z.object({ n: z.number().catch(0) }), { n: "x" }, { n: 0 }, "not an object"],
  trim: [z.string().trim().min(2), " ab ", "ab", "  a  "],
  regexFlags: [z.string().regex(/^ab$/i), "AB", "AB", "abc"],
} as const;
type DeclaredCase = keyof typeof declaredCases;

const declaredByUrl = defineWorkflow({
  name: "declared-by-url",
  input: z.object({ callback: z.string() }),
  callbacks: Object.fromEntries(Object.entries(declaredCases).map(([id, [schema]]) => [id, schema])),
  async run(ctx, input) {
    const cb = await ctx.step.callback(input.callback, { timeout: "1h" });
    await ctx.step.run("publish", () => {
      urls.set(ctx.runId, cb.url);
      return null;
    });
    return { got: await ctx.step.waitForCallback(cb) };
  },
});

/** A declared callback as a branch of a race: the payload is parsed as waitForCallback parses it. */
const declaredRace = defineWorkflow({
  name: "declared-race",
  input: z.object({}),
  callbacks: { transform: declaredCases.transform[0] },
  async run(ctx) {
    const cb = await ctx.step.callback("transform", { timeout: "1h" });
    await ctx.step.run("publish", () => {
      urls.set(ctx.runId, cb.url);
      return null;
    });
    return ctx.step.waitForAny("first", { answer: { callback: cb }, late: { sleep: "1h" } });
  },
});

/**
 * The same schemas given inline: the delivery could not check them from the row's JSON Schema, so
 * the call refuses them; `default` it can (a missing key is what a not-required property allows).
 */
const inlineByUrl = defineWorkflow({
  name: "inline-by-url",
  input: z.object({ callback: z.string() }),
  async run(ctx, input) {
    const schema = declaredCases[input.callback as DeclaredCase][0] as z.ZodType;
    let cb: CallbackHandle;
    try {
      cb = await ctx.step.callback(input.callback, { schema });
    } catch (error) {
      return (error as Error).message;
    }
    await ctx.step.run("publish", () => {
      urls.set(ctx.runId, cb.url);
      return null;
    });
    return { got: await ctx.step.waitForCallback(cb) };
  },
});

const tokenOf = (runId: string) => urls.get(runId)!.split("/api/durable/callback/")[1]!;

function post(routes: DurableRoutes, token: string, body: string, headers: Record<string, string> = {}) {
  const request = new Request(url(`/callback/${token}`), {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  return routes.callback.POST(request, { params: Promise.resolve({ token }) });
}

/** The route fingerprint plus the callbacks table, which holds what a delivery writes. */
async function rows(db: Kysely<any>): Promise<Record<string, string>> {
  const callbacks = await sql<{ n: number; h: string }>`
    select count(*)::int as n, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as h
      from durable_callbacks t`.execute(db);
  const { n, h } = callbacks.rows[0]!;
  return { ...(await fingerprint(db)), durable_callbacks: `${n}:${h}` };
}

/** A refused request: its status, code, the one error body, and no row changed. Answers the body's text. */
async function refused(
  fx: RouteFixture,
  send: () => Promise<Response>,
  status: number,
  code: string,
  routes = fx.routes,
) {
  const before = await rows(fx.db);
  const response = await send();
  await routes.idle();
  const text = await response.text();
  expect({ status: response.status, body: JSON.parse(text) }).toMatchObject({
    status,
    body: { error: { code, message: expect.any(String) } },
  });
  expect(await rows(fx.db)).toEqual(before);
  return text;
}

/** Starts a run of approveByUrl and ticks until it waits for its callback; answers its token. */
async function waitingRun(durable: Durable, id: string): Promise<string> {
  await durable.start(approveByUrl, {}, { id });
  await durable.tick();
  expect((await durable.status(id))?.status).toBe("waiting");
  return tokenOf(id);
}

const callbackRow = async (db: Kysely<any>, runId: string) =>
  db.selectFrom("durable_callbacks").selectAll().where("run_id", "=", runId).executeTakeFirstOrThrow();

let fx: RouteFixture;
const logged: string[] = [];
beforeAll(async () => {
  fx = await createFixture({ log: (message) => void logged.push(message) }, [approveByUrl]);
});
afterAll(() => fx.durable.close());
afterEach(() => {
  vi.unstubAllEnvs();
  expect(logged).toEqual([]); // no 500, no failed advance after an answer
});

describe("POST /api/durable/callback/{token}", () => {
  it("delivers (202), wakes the run with the payload, refuses another body (409), keeps the first", async () => {
    const token = await waitingRun(fx.durable, "cb-1");
    const response = await post(fx.routes, token, JSON.stringify({ approved: true }));
    expect(response.status).toBe(202);
    // The answer names no run: a token holder learns nothing past its own delivery.
    expect(await response.json()).toEqual({ ok: true, delivered: true, alreadyDelivered: false });
    await fx.routes.idle(); // advanced right after the answer: no tick needed
    expect(await fx.durable.status("cb-1")).toMatchObject({ status: "completed", output: { approved: true } });

    await refused(fx, () => post(fx.routes, token, JSON.stringify({ approved: false })), 409, "run_state_conflict");
    expect((await callbackRow(fx.db, "cb-1")).payload).toEqual({ approved: true });
    expect((await fx.durable.status("cb-1"))?.output).toEqual({ approved: true });
  });

  it.each([["idempotency-key"], ["webhook-id"]])(
    "answers a repeat of its %s with 200 and changes nothing",
    async (header) => {
      const token = await waitingRun(fx.durable, `cb-repeat-${header}`);
      const first = await post(fx.routes, token, JSON.stringify({ approved: true }), { [header]: "delivery-1" });
      expect(first.status).toBe(202);
      await fx.routes.idle();
      const before = await rows(fx.db);
      // The same key is the same delivery, whatever its body says: the first one stands.
      for (const body of [{ approved: true }, { approved: false }]) {
        const again = await post(fx.routes, token, JSON.stringify(body), { [header]: "delivery-1" });
        expect(again.status).toBe(200);
        expect(await again.json()).toEqual({ ok: true, delivered: false, alreadyDelivered: true });
      }
      await fx.routes.idle();
      expect(await rows(fx.db)).toEqual(before);
      // Another key, or none, is another delivery: refused.
      const other = JSON.stringify({ approved: false });
      await refused(fx, () => post(fx.routes, token, other, { [header]: "delivery-2" }), 409, "run_state_conflict");
      await refused(fx, () => post(fx.routes, token, other), 409, "run_state_conflict");
      await fx.durable.tick();
      expect((await fx.durable.status(`cb-repeat-${header}`))?.output).toEqual({ approved: true });
    },
  );

  it("answers unknown, forged and malformed tokens with byte-identical 404s", async () => {
    const token = await waitingRun(fx.durable, "cb-forged");
    const [id, mac] = token.split(".") as [string, string];
    const flip = (s: string) => `${s.slice(0, 5)}${s[5] === "A" ? "B" : "A"}${s.slice(6)}`;
    const tokens = {
      forgedMac: `${id}.${flip(mac)}`,
      forgedId: `${flip(id)}.${mac}`,
      otherSecret: callbackTokenFor("another-secret", randomBytes(16).toString("base64url")),
      ownIdOtherSecret: callbackTokenFor("another-secret", id),
      unknown: callbackTokenFor(SECRETS.durable, randomBytes(16).toString("base64url")),
      garbage: "not-a-token",
      dots: `${id}.${mac}.${mac}`,
      long: `${token}${"A".repeat(200)}`,
      empty: "",
    };
    const bodies = new Set<string>();
    const body = JSON.stringify({ approved: true });
    for (const [what, forged] of Object.entries(tokens)) {
      const text = await refused(fx, () => post(fx.routes, forged, body), 404, "callback_not_found");
      bodies.add(text);
      expect(bodies.size, what).toBe(1);
    }
    expect([...bodies]).toEqual([
      JSON.stringify({ error: { code: "callback_not_found", message: "no such callback" } }),
    ]);
    expect((await fx.durable.status("cb-forged"))?.status).toBe("waiting");
    expect(await post(fx.routes, token, body).then((r) => r.status)).toBe(202);
    await fx.routes.idle();
  });

  it("answers any string as a token with the same 404 and changes nothing", async () => {
    const notFound = JSON.stringify({ error: { code: "callback_not_found", message: "no such callback" } });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ maxLength: 60 }), fc.stringMatching(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/)),
        async (token) => {
          const text = await refused(fx, () => post(fx.routes, token, "{}"), 404, "callback_not_found");
          expect(text).toBe(notFound);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("refuses a body over 256 KiB with 413 before it is parsed, and JSON that grows past it when written", async () => {
    const token = await waitingRun(fx.durable, "cb-large");
    const big = `{"approved":true,"pad":"${"x".repeat(MAX_CALLBACK_BYTES)}"}`.slice(0, MAX_CALLBACK_BYTES + 1);
    expect(Buffer.byteLength(big)).toBe(MAX_CALLBACK_BYTES + 1);
    await refused(fx, () => post(fx.routes, token, big), 413, "payload_too_large");
    // Not JSON at all, and over the cap: the cap answers first (nothing was parsed).
    await refused(fx, () => post(fx.routes, "garbage", "x".repeat(MAX_CALLBACK_BYTES + 1)), 413, "payload_too_large");
    // Under the cap as sent, over it as stored (1e20 is written out in 21 digits).
    const grows = `[${"1e20,".repeat(Math.floor(MAX_CALLBACK_BYTES / 5) - 2)}1e20]`;
    expect(Buffer.byteLength(grows)).toBeLessThanOrEqual(MAX_CALLBACK_BYTES);
    await refused(fx, () => post(fx.routes, token, grows), 413, "payload_too_large");
    // Exactly at the cap is a body like any other (the schema lets other keys through).
    const atCap = `{"approved":true,"pad":"${"x".repeat(MAX_CALLBACK_BYTES - 26)}"}`;
    expect(Buffer.byteLength(atCap)).toBe(MAX_CALLBACK_BYTES);
    expect((await post(fx.routes, token, atCap)).status).toBe(202);
    await fx.routes.idle();
  });

  it("refuses a body that is not JSON or fails the schema with 422, and a later valid one delivers", async () => {
    const token = await waitingRun(fx.durable, "cb-422");
    for (const body of ["", "{", "approved=true", "\u00ff"]) {
      await refused(fx, () => post(fx.routes, token, body), 422, "invalid_input");
    }
    const bad = new Request(url(`/callback/${token}`), { method: "POST", body: new Uint8Array([0x7b, 0xff, 0x7d]) });
    await refused(fx, () => fx.routes.callback.POST(bad, { params: Promise.resolve({ token }) }), 422, "invalid_input");
    for (const body of [{ approved: "yes" }, {}, null, [true]]) {
      const text = await refused(fx, () => post(fx.routes, token, JSON.stringify(body)), 422, "invalid_input");
      expect(JSON.parse(text).error.issues).toEqual(expect.any(Array));
    }
    // An idempotency key no row could store is the request's fault too.
    const key = { "idempotency-key": "k".repeat(300) };
    await refused(fx, () => post(fx.routes, token, JSON.stringify({ approved: true }), key), 422, "invalid_input");
    expect((await fx.durable.status("cb-422"))?.status).toBe("waiting");
    expect((await post(fx.routes, token, JSON.stringify({ approved: false }))).status).toBe(202);
    await fx.routes.idle();
    await fx.durable.tick();
    expect(await fx.durable.status("cb-422")).toMatchObject({ status: "completed", output: { approved: false } });
  });

  it("refuses a callback whose run ended (409)", async () => {
    const token = await waitingRun(fx.durable, "cb-cancelled");
    await fx.durable.cancel("cb-cancelled");
    await refused(fx, () => post(fx.routes, token, JSON.stringify({ approved: true })), 409, "run_state_conflict");
    expect((await callbackRow(fx.db, "cb-cancelled")).delivered_at).toBeNull();
  });

  it("binds the token to its run and step: run A's token never answers run B", async () => {
    const a = await waitingRun(fx.durable, "cb-run-a");
    const b = await waitingRun(fx.durable, "cb-run-b");
    expect(a).not.toBe(b);
    expect((await post(fx.routes, a, JSON.stringify({ approved: true }))).status).toBe(202);
    await fx.routes.idle();
    await fx.durable.tick();
    expect(await fx.durable.status("cb-run-a")).toMatchObject({ status: "completed", output: { approved: true } });
    expect((await fx.durable.status("cb-run-b"))?.status).toBe("waiting");
    expect((await callbackRow(fx.db, "cb-run-b")).delivered_at).toBeNull();
    // A's token again, another body: A's callback is resolved; B's is not touched.
    await refused(fx, () => post(fx.routes, a, JSON.stringify({ approved: false })), 409, "run_state_conflict");
    expect((await callbackRow(fx.db, "cb-run-b")).delivered_at).toBeNull();
    expect((await post(fx.routes, b, JSON.stringify({ approved: false }))).status).toBe(202);
    await fx.routes.idle();
    await fx.durable.tick();
    expect(await fx.durable.status("cb-run-b")).toMatchObject({ status: "completed", output: { approved: false } });
    expect((await fx.durable.status("cb-run-a"))?.output).toEqual({ approved: true });
  });

  it("answers every other method with 405 and an allow header", async () => {
    const token = await waitingRun(fx.durable, "cb-405");
    for (const method of ["GET", "PUT", "PATCH", "DELETE"] as const) {
      const request = new Request(url(`/callback/${token}`), { method });
      const response = await fx.routes.callback[method](request, { params: Promise.resolve({ token }) });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
    }
    expect((await fx.durable.status("cb-405"))?.status).toBe("waiting");
  });
});

describe("a callback past its timeout", () => {
  let late: RouteFixture;
  beforeAll(async () => {
    late = await createFixture({}, [approveByUrl]);
  });
  afterAll(() => late.durable.close());

  it("is refused (409) and waitForCallback answers null", async () => {
    const token = await waitingRun(late.durable, "cb-late");
    const deliver = () => post(late.routes, token, JSON.stringify({ approved: true }));
    await late.durable.testing.advanceClock("1h");
    await refused(late, deliver, 409, "run_state_conflict", late.routes); // before the run has seen the timeout
    await late.durable.tick();
    expect(await late.durable.status("cb-late")).toMatchObject({ status: "completed", output: null });
    await refused(late, deliver, 409, "run_state_conflict", late.routes); // and after its run ended
  });
});

describe("the token", () => {
  it("says neither the run nor the step, and dies with the secret (createDurable secrets.durable)", async () => {
    const token = await waitingRun(fx.durable, "cb-secret-run");
    expect(token).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}$/);
    const decoded = token.split(".").map((part) => Buffer.from(part, "base64url").toString("latin1"));
    for (const said of [token, ...decoded]) {
      expect(said).not.toContain("cb-secret-run");
      expect(said).not.toContain("approve");
    }
    // The same database, read by an instance whose DURABLE_SECRET was rotated.
    const rotated = createDurable({
      db: fx.db,
      workflows: [approveByUrl],
      secrets: { ...SECRETS, durable: "rotated-durable-secret" },
      log: () => {},
    });
    const rotatedRoutes = createDurableRoutes(async () => rotated, { secrets: SECRETS, log: () => {} });
    const body = JSON.stringify({ approved: true });
    await refused(fx, () => post(rotatedRoutes, token, body), 404, "callback_not_found", rotatedRoutes);
    expect((await post(fx.routes, token, body)).status).toBe(202);
    await fx.routes.idle();
  });

  it("dies with DURABLE_SECRET from the environment", async () => {
    vi.stubEnv("DURABLE_SECRET", "env-secret-one");
    const env = createDurable({ db: fx.db, workflows: [approveByUrl], log: () => {} });
    const routes = createDurableRoutes(async () => env, { log: () => {} });
    const token = await waitingRun(env, "cb-env-secret");
    expect(token).toBe(callbackTokenFor("env-secret-one", token.split(".")[0]!));
    vi.stubEnv("DURABLE_SECRET", "env-secret-two");
    const body = JSON.stringify({ approved: true });
    await refused(fx, () => post(routes, token, body), 404, "callback_not_found", routes);
    vi.stubEnv("DURABLE_SECRET", "env-secret-one");
    expect((await post(routes, token, body)).status).toBe(202);
    await routes.idle();
    await env.tick();
    expect(await env.status("cb-env-secret")).toMatchObject({ status: "completed", output: { approved: true } });
  });
});

describe("a callback's schema at delivery", () => {
  let zx: RouteFixture;
  beforeAll(async () => {
    zx = await createFixture({}, [declaredByUrl, inlineByUrl, approveByUrl, declaredRace]);
  });
  afterAll(() => zx.durable.close());

  it.each(Object.keys(declaredCases) as DeclaredCase[])(
    "a declared %s schema: the delivery parses with zod, taking what it accepts, 422 for what it refuses",
    async (name) => {
      const [, accepted, parsed, refusedPayload] = declaredCases[name];
      const id = `declared-${name}`;
      await zx.durable.start(declaredByUrl, { callback: name }, { id });
      await zx.durable.tick();
      expect((await zx.durable.status(id))?.status).toBe("waiting");
      const token = tokenOf(id);
      const text = await refused(
        zx,
        () => post(zx.routes, token, JSON.stringify(refusedPayload)),
        422,
        "invalid_input",
      );
      expect(JSON.parse(text).error.issues).toEqual(expect.any(Array));
      const response = await post(zx.routes, token, JSON.stringify(accepted));
      expect(response.status).toBe(202);
      await zx.routes.idle();
      await zx.durable.tick();
      expect(await zx.durable.status(id)).toMatchObject({ status: "completed", output: { got: parsed } });
      // The payload is stored as it was sent; waitForCallback parsed it.
      expect((await callbackRow(zx.db, id)).payload).toEqual(accepted);
    },
  );

  it.each((Object.keys(declaredCases) as DeclaredCase[]).filter((name) => name !== "default"))(
    "an inline %s schema is refused at ctx.step.callback, before any URL exists",
    async (name) => {
      const id = `inline-${name}`;
      await zx.durable.start(inlineByUrl, { callback: name }, { id });
      await zx.durable.tick();
      const status = await zx.durable.status(id);
      expect(status?.status).toBe("completed");
      expect(status?.output).toMatch(/cannot check as JSON Schema; declare it in defineWorkflow\(\{ callbacks/);
      const made = await zx.db.selectFrom("durable_callbacks").selectAll().where("run_id", "=", id).execute();
      expect(made).toEqual([]);
    },
  );

  it("a declared callback as a race branch: 422 for what zod refuses, the value parsed", async () => {
    await zx.durable.start(declaredRace, {}, { id: "declared-race" });
    await zx.durable.tick();
    const token = tokenOf("declared-race");
    await refused(zx, () => post(zx.routes, token, "5"), 422, "invalid_input");
    expect((await post(zx.routes, token, JSON.stringify("abcd"))).status).toBe(202);
    await zx.routes.idle();
    await zx.durable.tick();
    const status = await zx.durable.status("declared-race");
    expect(status).toMatchObject({ status: "completed", output: { branch: "answer", value: 4 } });
  });

  it("a callback of an earlier release (coerce's JSON Schema in its row) is checked by its declared one", async () => {
    await zx.durable.start(declaredByUrl, { callback: "coerce" }, { id: "earlier-coerce" });
    await zx.durable.tick();
    // What releases before declared callbacks wrote: the JSON Schema of the inline schema's input.
    const earlier = z.toJSONSchema(declaredCases.coerce[0], { io: "input", unrepresentable: "any" });
    await zx.db
      .updateTable("durable_callbacks")
      .set({ schema: JSON.stringify(earlier) })
      .where("run_id", "=", "earlier-coerce")
      .execute();
    expect((await callbackRow(zx.db, "earlier-coerce")).schema).toMatchObject({
      properties: { amount: { type: "number" } },
    });
    const token = tokenOf("earlier-coerce");
    expect((await post(zx.routes, token, JSON.stringify({ amount: "12.50" }))).status).toBe(202);
    await zx.routes.idle();
    await zx.durable.tick();
    expect(await zx.durable.status("earlier-coerce")).toMatchObject({
      status: "completed",
      output: { got: { amount: 12.5 } },
    });
  });

  it("an inline default schema is checked exactly from its row's JSON Schema", async () => {
    await zx.durable.start(inlineByUrl, { callback: "default" }, { id: "inline-default" });
    await zx.durable.tick();
    const token = tokenOf("inline-default");
    await refused(zx, () => post(zx.routes, token, JSON.stringify({ n: "x" })), 422, "invalid_input");
    expect((await post(zx.routes, token, "{}")).status).toBe(202);
    await zx.routes.idle();
    await zx.durable.tick();
    expect(await zx.durable.status("inline-default")).toMatchObject({ status: "completed", output: { got: { n: 7 } } });
  });

  it("an inline schema JSON Schema checks exactly is still checked at delivery from its row", async () => {
    const token = await waitingRun(zx.durable, "exact-inline");
    expect((await callbackRow(zx.db, "exact-inline")).schema).toMatchObject({ type: "object" });
    await refused(zx, () => post(zx.routes, token, JSON.stringify({ approved: "yes" })), 422, "invalid_input");
    expect((await post(zx.routes, token, JSON.stringify({ approved: true }))).status).toBe(202);
    await zx.routes.idle();
  });

  it("refuses bad callbacks declarations at define time", () => {
    const run = async () => null;
    const input = z.object({});
    expect(() => defineWorkflow({ name: "x", input, callbacks: [] as never, run })).toThrow(/callbacks is an object/);
    expect(() => defineWorkflow({ name: "x", input, callbacks: { a: { parse: 1 } } as never, run })).toThrow(
      /callbacks\["a"\] is not one/,
    );
    expect(() => defineWorkflow({ name: "x", input, callbacks: { "": z.string() }, run })).toThrow(/is not a step id/);
  });
});
