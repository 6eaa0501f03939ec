import { getDeadline as vercelDeadline, waitUntil as vercelWaitUntil } from "@vercel/functions";
import * as z from "zod";
import type { Durable } from "../engine/create-durable";
import { InvalidInputError, RunNotFoundError, UnauthorizedError, WorkflowNotFoundError } from "../errors";
import { isStorableName, NAME_RULE } from "../names";
import { runStatusValues } from "../schemas";
import { matchesAnySecret, secretsEqual } from "../auth/constant-time";
import { errorBody, httpStatusOf } from "./error-response";
import { resolveSecret, type SecretName } from "../auth/secrets";
import { fanOutRequest, fanOutWidth, HOP_HEADER } from "./fan-out";
import { runEventStream, SSE_HEADERS } from "./sse";
import { parseWebhookSecrets, verifyWebhook } from "../auth/webhook";

/**
 * Route-handler factories for the HTTP contract (README, "HTTP routes"). Every handler is thin and in the
 * same order: method → body cap → auth → JSON → schema → one call on the durable instance → map
 * errors. Everything that can refuse a request runs before the one call, so a request answered
 * with an error has changed nothing.
 *
 * @example
 * // app/durable.ts
 * export const routes = createDurableRoutes(getDurable, { maxDuration: 60 });
 * // app/api/durable/tick/route.ts
 * export const runtime = "nodejs";
 * export const maxDuration = 60;
 * export const { GET, POST, PUT, PATCH, DELETE } = routes.tick;
 */

/** Request bodies larger than this are refused with 413 before they are parsed or HMAC'd. */
export const MAX_BODY_BYTES = 256 * 1024;

export interface DurableRoutesOptions {
  /** Seconds: what the route files export as `maxDuration` (60). The budget when the platform gives no deadline. */
  maxDuration?: number;
  /** Kept free between the end of a budget and the deadline, to answer and flush (5000 ms). */
  budgetMarginMs?: number;
  /**
   * Defaults to the environment (DURABLE_SECRET, CRON_SECRET, DURABLE_SIGNAL_SECRET); give the
   * durable instance the same.
   */
  secrets?: { durable?: string; cron?: string; signal?: string };
  maxBodyBytes?: number;
  /**
   * Keeps post-response work alive (`waitUntil` of @vercel/functions; a no-op off Vercel, where the
   * work runs anyway).
   */
  waitUntil?: (promise: Promise<unknown>) => void;
  /** The invocation's deadline (`getDeadline` of @vercel/functions; undefined off Vercel). */
  getDeadline?: () => Date | undefined;
  /** Our clock in seconds, for webhook timestamps (tests). */
  nowSeconds?: () => number;
  log?: (message: string) => void;
  /**
   * Fan-out: a tick that finds more due runs than it advances at once (the instance's
   * `tickConcurrency`) calls this same route up to `maxFanOut` more times, each claiming on its
   * own; those calls carry a hop header and do not fan out further. Default: DURABLE_MAX_FAN_OUT,
   * else 0 (README, "Scaling out").
   */
  maxFanOut?: number;
  /** How fan-out calls are sent (the global `fetch`; tests route them elsewhere). */
  fetch?: (request: Request) => Promise<Response>;
  /**
   * The stream route: reads every `pollMs` (100) while nothing is new, at most `batch` chunks a
   * read (200), and a `: ping` comment after `pingMs` (15000) with nothing sent.
   */
  stream?: { pollMs?: number; pingMs?: number; batch?: number };
}

type RunContext = { params: Promise<{ id: string }> };
type Handler = (request: Request) => Promise<Response>;
type RunHandler = (request: Request, context: RunContext) => Promise<Response>;
type Methods<H> = { GET: H; POST: H; PUT: H; PATCH: H; DELETE: H };

export interface DurableRoutes {
  /** GET: Vercel Cron, `Authorization: Bearer $CRON_SECRET` → 200 TickReport. */
  tick: Methods<Handler>;
  /** POST: Standard Webhooks or admin bearer → 202 `{ ok, signalled, alreadyDelivered }`. */
  signal: Methods<Handler>;
  /** GET: list (admin) · POST: start (admin) → 201 created / 200 existing. */
  runs: Methods<Handler>;
  /** GET: status, bearer status token or admin → 200 RunStatus; unknown and unauthorised → the same 404. */
  run: Methods<RunHandler>;
  /** POST (admin) → 200 RunStatus. */
  cancel: Methods<RunHandler>;
  /** POST (admin) → 200 RunStatus; the run is advanced after the answer. */
  retry: Methods<RunHandler>;
  /**
   * GET: the run's stream as Server-Sent Events, bearer status token or admin; unknown and
   * unauthorised → the same 404. From `Last-Event-ID` or `?from=` (the last seq the reader has);
   * `end` once the run is terminal; cut without `end` before the budget runs out.
   */
  stream: Methods<RunHandler>;
  /** Resolves once every post-response advance started so far has settled (tests, scripts). */
  idle(): Promise<void>;
}

/** An answer decided before the durable call: its status, code and message are the response. */
class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

// The one name check (names.ts): a name Postgres could not store is a 422 here, never a 500.
const storedName = z.string().refine(isStorableName, `must be ${NAME_RULE}`);

const signalBody = z.object({
  runId: storedName,
  name: storedName,
  payload: z.unknown().optional(),
  /** Delivery id for dedup when the admin bearer is used; webhooks use `webhook-id`. */
  id: storedName.optional(),
});
const startBody = z.object({
  workflow: storedName,
  input: z.unknown().optional(),
  id: storedName.optional(),
});
const cancelBody = z.object({ reason: z.string().max(1000).optional() });
const listQuery = z.object({
  status: runStatusValues.optional(),
  workflow: storedName.optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
  cursor: z.string().min(1).max(1000).optional(),
});

const HEADERS = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { ...HEADERS, ...headers } });

// Only a single space and visible ASCII: "Bearer  x", tabs or trailing junk are not the secret.
function bearerOf(request: Request): string | null {
  const match = /^Bearer ([\x21-\x7e]+)$/i.exec(request.headers.get("authorization") ?? "");
  return match ? match[1]! : null;
}

const unauthorized = () => new UnauthorizedError("missing or wrong credentials");

/** Reads the body, refusing it (413) as soon as it is larger than `limit`, without reading the rest. */
async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  const tooLarge = () => new HttpRefusal(413, "payload_too_large", `the request body is larger than ${limit} bytes`);
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge();
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * Where a stream read resumes: the last seq the reader has, from `Last-Event-ID` (what a
 * reconnecting reader sends; it wins over the query) or `?from=`, else 0. A whole number or 400.
 */
function resumePoint(request: Request): number {
  const header = request.headers.get("last-event-id");
  const [value, what] =
    header !== null && header !== ""
      ? [header, "Last-Event-ID"]
      : [new URL(request.url).searchParams.get("from"), "from"];
  if (value === null) return 0;
  const seq = /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(seq)) {
    throw new HttpRefusal(400, "invalid_resume_point", `${what} must be a whole number >= 0 (a seq)`);
  }
  return seq;
}

/** The tick's hop count: 0 from outside, 1 from a fanned-out call; anything else is 400. */
function hopOf(request: Request): number {
  const value = request.headers.get(HOP_HEADER);
  if (value === null) return 0;
  if (value !== "0" && value !== "1") {
    throw new HttpRefusal(400, "invalid_hop", `${HOP_HEADER} is 0 or 1 (a tick called by a tick)`);
  }
  return Number(value);
}

/** maxFanOut (option or DURABLE_MAX_FAN_OUT): a whole number from 0 to 64. */
function fanOutLimit(value: number | string | undefined): number {
  if (value === undefined || value === "") return 0;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 0 || limit > 64) {
    throw new InvalidInputError(`maxFanOut (DURABLE_MAX_FAN_OUT) is a whole number from 0 to 64, not "${value}"`);
  }
  return limit;
}

/** UTF-8 JSON, or 400. An empty body is `empty` (undefined: refused where a body is required). */
function parseJson(raw: Uint8Array, empty?: unknown): unknown {
  if (raw.byteLength === 0 && empty !== undefined) return empty;
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
  } catch {
    throw new HttpRefusal(400, "invalid_json", "the request body is not valid JSON");
  }
}

function parseWith<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new InvalidInputError(`the ${what} is invalid`, { issues: parsed.error.issues });
  return parsed.data;
}

/** Builds the handlers over the app's durable instance; `getDurable` is awaited per request, so it may open lazily. */
export function createDurableRoutes(
  getDurable: () => Promise<Durable>,
  options: DurableRoutesOptions = {},
): DurableRoutes {
  const maxDurationMs = (options.maxDuration ?? 60) * 1000;
  const marginMs = options.budgetMarginMs ?? 5000;
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const log = options.log ?? ((message: string) => console.warn(`[durable] ${message}`));
  const deadlineOf = options.getDeadline ?? vercelDeadline;
  const keepAlive = options.waitUntil ?? vercelWaitUntil;
  const inFlight = new Set<Promise<void>>();
  const streamPollMs = options.stream?.pollMs ?? 100;
  const streamPingMs = options.stream?.pingMs ?? 15_000;
  const streamBatch = options.stream?.batch ?? 200;
  const maxFanOut = fanOutLimit(options.maxFanOut ?? process.env.DURABLE_MAX_FAN_OUT);
  const send = options.fetch ?? ((request: Request) => fetch(request));

  // Resolved per request: a missing secret in production throws MissingSecretError (→ 503).
  const secret = (name: SecretName) => resolveSecret(name, options.secrets?.[name], log);

  /**
   * Whether the request may read run `id` (its status, its stream): the bearer is the run's status
   * token or the admin secret. Callers answer an unknown run and a refusal with the same 404, so a
   * caller without a token cannot learn which run ids exist.
   */
  function mayRead(request: Request, durable: Durable, id: string): boolean {
    const token = bearerOf(request);
    return token !== null && matchesAnySecret(token, [secret("durable"), durable.statusToken(id)]);
  }

  /** What is left of this invocation for engine work: the platform's deadline, else maxDuration. */
  function budgetMs(startedAt: number): number {
    const deadline = deadlineOf()?.getTime() ?? startedAt + maxDurationMs;
    return Math.max(0, deadline - Date.now() - marginMs);
  }

  /**
   * Advances the run after the answer. The promise starts now and is handed to `waitUntil`, which
   * only keeps it alive on Vercel: under `next start` it runs anyway, in the same process.
   */
  function advanceAfterResponse(durable: Durable, runId: string, startedAt: number) {
    afterResponse(
      (async () => {
        await new Promise((resolve) => setImmediate(resolve)); // let the answer go out first
        await durable.advance(runId, { budgetMs: budgetMs(startedAt) });
      })().catch((e) => log(`advancing run "${runId}" after the response failed: ${(e as Error)?.stack ?? e}`)),
    );
  }

  /** Keeps `work` alive past the answer (waitUntil) and lets `idle()` wait for it. */
  function afterResponse(work: Promise<void>) {
    const task: Promise<void> = work.finally(() => inFlight.delete(task));
    inFlight.add(task);
    try {
      keepAlive(task);
    } catch {
      // Never let the platform hook turn a success into an error; the task runs regardless.
    }
  }

  /**
   * Calls this tick route `fanOutWidth` more times when due runs outnumber what one tick advances
   * at once; each call is left running past the answer. Answers how many were called.
   */
  async function fanOut(request: Request, durable: Durable): Promise<number> {
    const perTick = durable.tickConcurrency;
    const due = await durable.countDue({ max: perTick * (maxFanOut + 1) });
    const width = fanOutWidth(due, perTick, maxFanOut);
    for (let i = 0; i < width; i++) {
      const call = fanOutRequest(request.url, secret("cron"));
      afterResponse(
        send(call)
          .then(async (response) => {
            await response.text();
            if (!response.ok) log(`a fanned-out tick answered ${response.status}`);
          })
          .catch((e) => log(`a fanned-out tick failed: ${(e as Error)?.message ?? e}`)),
      );
    }
    return width;
  }

  function requireBearer(request: Request, expected: string) {
    const token = bearerOf(request);
    if (token === null || !secretsEqual(token, expected)) throw unauthorized();
  }

  /** The delivery id when a valid Standard Webhooks signature is present; null for the admin bearer. */
  function authorizeSignal(request: Request, raw: Uint8Array): string | null {
    if (request.headers.has("webhook-signature") || !request.headers.has("authorization")) {
      let keys: Buffer[];
      try {
        keys = parseWebhookSecrets(secret("signal"));
      } catch (e) {
        if ((e as Error)?.name === "MissingSecretError") throw e;
        throw new HttpRefusal(503, "misconfigured", "DURABLE_SIGNAL_SECRET is not a list of whsec_ keys");
      }
      const nowSeconds = options.nowSeconds?.();
      const verdict = verifyWebhook({
        keys,
        headers: request.headers,
        body: raw,
        ...(nowSeconds === undefined ? {} : { nowSeconds }),
      });
      if (!verdict.ok) throw new UnauthorizedError(`webhook verification failed: ${verdict.reason.replace(/_/g, " ")}`);
      return verdict.id;
    }
    requireBearer(request, secret("durable"));
    return null;
  }

  /** Maps everything thrown to the one error body; unknown errors are logged and never leak. */
  function guard<A extends unknown[]>(fn: (request: Request, ...rest: A) => Promise<Response>) {
    return async (request: Request, ...rest: A): Promise<Response> => {
      try {
        return await fn(request, ...rest);
      } catch (e) {
        if (e instanceof HttpRefusal)
          return json(e.status, { error: { code: e.code, message: e.message, ...e.extra } });
        if ((e as Error)?.name === "MissingSecretError") {
          return json(503, { error: { code: "secret_missing", message: (e as Error).message } });
        }
        const status = httpStatusOf(e);
        if (status === 500)
          log(`${request.method} ${new URL(request.url).pathname} failed: ${(e as Error)?.stack ?? e}`);
        const body = errorBody(e);
        if (InvalidInputError.is(e) && e.issues !== undefined) Object.assign(body.error, { issues: e.issues });
        return json(status, body);
      }
    };
  }

  /** The given methods; every other one answers 405 with the error body and an `allow` header. */
  function only<H extends Handler | RunHandler>(handlers: Partial<Methods<H>>): Methods<H> {
    const allowed = Object.keys(handlers);
    const message = `this route answers ${allowed.join(" and ")} only`;
    const notAllowed = (async () =>
      json(405, { error: { code: "method_not_allowed", message } }, { allow: allowed.join(", ") })) as unknown as H;
    return { GET: notAllowed, POST: notAllowed, PUT: notAllowed, PATCH: notAllowed, DELETE: notAllowed, ...handlers };
  }

  /** The path's run id; one that no run could have (empty, too long, NUL) is simply not found. */
  async function runId(context: RunContext): Promise<string> {
    const { id } = await context.params;
    if (!isStorableName(id)) throw new RunNotFoundError(id);
    return id;
  }

  return {
    tick: only<Handler>({
      GET: guard(async (request) => {
        const startedAt = Date.now();
        // Only the bearer counts: the cron's user agent, cookies and query strings prove nothing.
        requireBearer(request, secret("cron"));
        const hop = hopOf(request);
        const durable = await getDurable();
        // Only a tick called from outside fans out: one called by a tick does not (no loops).
        const fannedOut = hop === 0 && maxFanOut > 0 ? await fanOut(request, durable) : 0;
        const report = await durable.tick({ budgetMs: budgetMs(startedAt) });
        return json(200, { ...report, fannedOut });
      }),
    }),

    signal: only<Handler>({
      POST: guard(async (request) => {
        const startedAt = Date.now();
        const raw = await readBody(request, maxBody); // 413 before any HMAC
        const deliveryId = authorizeSignal(request, raw);
        const body = parseWith(signalBody, parseJson(raw), "signal request");
        const durable = await getDurable();
        const id = deliveryId ?? body.id;
        const result = await durable.signal({
          runId: body.runId,
          name: body.name,
          payload: body.payload ?? null,
          ...(id === undefined ? {} : { id }),
        });
        if (result.signalled) advanceAfterResponse(durable, body.runId, startedAt);
        return json(202, result);
      }),
    }),

    runs: only<Handler>({
      GET: guard(async (request) => {
        requireBearer(request, secret("durable"));
        const query = parseWith(listQuery, Object.fromEntries(new URL(request.url).searchParams), "query");
        const durable = await getDurable();
        return json(200, await durable.list(query));
      }),
      POST: guard(async (request) => {
        const startedAt = Date.now();
        const raw = await readBody(request, maxBody);
        requireBearer(request, secret("durable"));
        const body = parseWith(startBody, parseJson(raw), "start request");
        const durable = await getDurable();
        const workflow = durable.workflows.get(body.workflow);
        if (!workflow) throw new WorkflowNotFoundError(body.workflow);
        const started = await durable.start(workflow, body.input, body.id === undefined ? {} : { id: body.id });
        const read = await durable.inspect(started.id);
        const status = read?.status;
        if (read?.due) advanceAfterResponse(durable, started.id, startedAt);
        return json(started.created ? 201 : 200, {
          id: started.id,
          created: started.created,
          status: status?.status ?? "pending",
          statusToken: started.statusToken,
        });
      }),
    }),

    run: only<RunHandler>({
      GET: guard(async (request, context: RunContext) => {
        const startedAt = Date.now();
        const id = await runId(context);
        const durable = await getDurable();
        // Authorise before reading, because the read heals.
        const read = mayRead(request, durable, id) ? await durable.inspect(id) : null;
        if (!read) throw new RunNotFoundError(id);
        // Only a run that is due by the database clock is worth a claim after the answer.
        if (read.due) advanceAfterResponse(durable, id, startedAt);
        return json(200, read.status);
      }),
    }),

    cancel: only<RunHandler>({
      POST: guard(async (request, context: RunContext) => {
        const raw = await readBody(request, maxBody);
        requireBearer(request, secret("durable"));
        const id = await runId(context);
        const body = parseWith(cancelBody, parseJson(raw, {}), "cancel request");
        const durable = await getDurable();
        return json(200, await durable.cancel(id, body.reason));
      }),
    }),

    retry: only<RunHandler>({
      POST: guard(async (request, context: RunContext) => {
        const startedAt = Date.now();
        const raw = await readBody(request, maxBody);
        requireBearer(request, secret("durable"));
        const id = await runId(context);
        parseJson(raw, {}); // no fields, but a malformed body is still a bad request
        const durable = await getDurable();
        const status = await durable.retry(id);
        advanceAfterResponse(durable, id, startedAt); // a retried run is due at once
        return json(200, status);
      }),
    }),

    stream: only<RunHandler>({
      GET: guard(async (request, context: RunContext) => {
        const startedAt = Date.now();
        const id = await runId(context);
        const durable = await getDurable();
        if (!mayRead(request, durable, id)) throw new RunNotFoundError(id);
        const after = resumePoint(request);
        const first = await durable.readStream(id, { after, limit: streamBatch });
        if (!first) throw new RunNotFoundError(id);
        const body = runEventStream({
          read: (from) => durable.readStream(id, { after: from, limit: streamBatch }),
          after,
          first,
          batch: streamBatch,
          pollMs: streamPollMs,
          pingMs: streamPingMs,
          // The budget the other routes give the engine: the reader resumes in a fresh invocation.
          stopAt: Date.now() + budgetMs(startedAt),
          signal: request.signal,
          log,
        });
        return new Response(body, { status: 200, headers: SSE_HEADERS });
      }),
    }),

    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
