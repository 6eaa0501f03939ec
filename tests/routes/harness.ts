// Shared setup of the route suites: an in-memory durable instance, the handlers built over it,
// signed webhook requests, and a fingerprint of the durable tables to prove "nothing changed".
import { sql, type Kysely } from "kysely";
import { expect } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, FatalStepError, type Durable } from "@/lib/durable";
import { createDurableRoutes, type DurableRoutes, type DurableRoutesOptions } from "@/lib/durable/next";
import { signWebhook } from "@/lib/durable/auth/webhook";
import type { AnyWorkflow } from "@/lib/durable/types";

export const SIGNAL_KEY = Buffer.from("route-tests-signal-key-0123456789");
export const OLD_SIGNAL_KEY = Buffer.from("route-tests-old-signal-key-98765");
export const whsec = (key: Buffer) => `whsec_${key.toString("base64")}`;
export const SECRETS = { durable: "test-durable-secret", cron: "test-cron-secret", signal: whsec(SIGNAL_KEY) };

/** Module state a test flips to make the `flaky` workflow pass after a retry. */
export const flakiness = { fail: true };

export const greet = defineWorkflow({
  name: "greet",
  input: z.object({ name: z.string() }),
  async run(ctx, input) {
    const at = await ctx.step.value("at", () => Date.now());
    const text = await ctx.step.run("compose", () => `hello ${input.name}`);
    return { text, at };
  },
});

export const approval = defineWorkflow({
  name: "approval",
  input: z.object({ docId: z.string() }),
  signals: { decision: z.object({ approved: z.boolean() }) },
  async run(ctx) {
    const decision = await ctx.step.waitForSignal<{ approved: boolean }>("decision", { timeout: "1h" });
    return { approved: decision?.approved ?? null };
  },
});

export const flaky = defineWorkflow({
  name: "flaky",
  input: z.object({}),
  async run(ctx) {
    return ctx.step.run("maybe", () => {
      if (flakiness.fail) throw new FatalStepError("failing on purpose");
      return "ok";
    });
  },
});

/** One non-terminal run per branch (workflow option `singleton`); it waits for a signal. */
export const exclusive = defineWorkflow({
  name: "exclusive",
  input: z.object({ branch: z.string() }),
  singleton: { key: (input) => input.branch },
  async run(ctx) {
    return ctx.step.waitForSignal("done", { timeout: "1h" });
  },
});

export interface RouteFixture {
  durable: Durable;
  routes: DurableRoutes;
  db: Kysely<any>;
  /** Builds another set of handlers over the same instance (other secrets, clock, deadline). */
  routesWith(options: DurableRoutesOptions): DurableRoutes;
}

/** `extraWorkflows`: what a suite registers besides greet, approval and flaky. */
export async function createFixture(
  options: DurableRoutesOptions = {},
  extraWorkflows: AnyWorkflow[] = [],
): Promise<RouteFixture> {
  const db = await connect("memory://");
  const workflows = [greet, approval, flaky, exclusive, ...extraWorkflows];
  const durable = createDurable({ db, workflows, secrets: SECRETS, log: () => {} });
  await durable.migrate();
  const routesWith = (more: DurableRoutesOptions) =>
    createDurableRoutes(async () => durable, { secrets: SECRETS, log: () => {}, ...options, ...more });
  return { durable, db, routes: routesWith({}), routesWith };
}

const TABLES = [
  "durable_runs",
  "durable_steps",
  "durable_signals",
  "durable_events",
  "durable_clock",
  "durable_stream_chunks",
  "durable_schedules",
  "durable_app_events",
  "durable_approval_decisions",
];

/** Row count and md5 of every durable table's rows (as text, in a stable order). */
export async function fingerprint(db: Kysely<any>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const table of TABLES) {
    const { rows } = await sql<{ n: number; h: string }>`
      select count(*)::int as n, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as h
        from ${sql.table(table)} t`.execute(db);
    out[table] = `${rows[0]!.n}:${rows[0]!.h}`;
  }
  return out;
}

/** Sends a request that must be refused: the status, the one error body shape, and an unchanged database. */
export async function expectRefused(
  fixture: RouteFixture,
  send: () => Promise<Response>,
  status: number,
  code?: string,
  routes: DurableRoutes = fixture.routes,
): Promise<{ error: { code: string; message: string; issues?: unknown } }> {
  const before = await fingerprint(fixture.db);
  const response = await send();
  await routes.idle();
  const body = await response.json();
  expect({ status: response.status, body }).toMatchObject({
    status,
    body: { error: { code: expect.any(String), message: expect.any(String) } },
  });
  if (code) expect(body.error.code).toBe(code);
  expect(await fingerprint(fixture.db)).toEqual(before);
  return body;
}

export const url = (path: string) => `http://localhost/api/durable${path}`;
export const params = (id: string) => ({ params: Promise.resolve({ id }) });
export const admin = { authorization: `Bearer ${SECRETS.durable}` };

export function jsonRequest(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  method = "POST",
): Request {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return new Request(url(path), { method, headers: { "content-type": "application/json", ...headers }, body: text });
}

/** A Standard Webhooks delivery to /signal, signed with `keys` (each adds a `v1,` entry). */
export function signedSignal(
  body: string,
  options: { keys?: Buffer[]; id?: string; timestamp?: number; extraSignatures?: string[]; omit?: string[] } = {},
): Request {
  const id = options.id ?? `msg_${Math.random().toString(36).slice(2)}`;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const signatures = [
    ...(options.extraSignatures ?? []),
    ...(options.keys ?? [SIGNAL_KEY]).map((key) => signWebhook(key, id, timestamp, body)),
  ];
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatures.join(" "),
  };
  for (const name of options.omit ?? []) delete headers[name];
  return new Request(url("/signal"), { method: "POST", headers, body });
}
