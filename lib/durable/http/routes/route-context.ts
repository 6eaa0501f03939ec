import { getDeadline as vercelDeadline, waitUntil as vercelWaitUntil } from "@vercel/functions";
import { matchesAnySecret } from "../../auth/constant-time";
import { MissingSecretError, resolveSecret, type SecretName } from "../../auth/secrets";
import type { Durable } from "../../engine/create-durable";
import { InvalidInputError, UnauthorizedError } from "../../errors";
import { errorBody, httpStatusOf } from "../error-response";
import {
  type CallbackHandler,
  type DurableRoutesOptions,
  type Handler,
  MAX_BODY_BYTES,
  type Methods,
  type RunHandler,
} from "./types";

/**
 * What every route handler is given, built once by `createDurableRoutes`: the app's durable
 * instance, the secrets, the two auth checks, the error mapping and the work left running after
 * the answer. Every handler is thin and in the same order: method → body cap → auth → JSON →
 * schema → one call on the durable instance → map errors. Everything that can refuse a request
 * runs before the one call, so a request answered with an error has changed nothing.
 */
export interface RouteContext {
  /** The app's durable instance, awaited per request, so it may open lazily. */
  durable(): Promise<Durable>;
  readonly options: DurableRoutesOptions;
  /** The request-body cap (`maxBodyBytes`, else MAX_BODY_BYTES). */
  readonly maxBody: number;
  readonly log: (message: string) => void;
  /** Resolved per request: a missing secret in production throws MissingSecretError (→ 503). */
  secret(name: SecretName): string;
  /** Refuses (401) a request whose `Authorization: Bearer` is not the secret `name` (or one of `names`). */
  requireBearer(request: Request, name: SecretName | readonly SecretName[]): void;
  /**
   * Whether the request may read run `id` (its status, its stream): the bearer is the run's status
   * token or the admin secret. Callers answer an unknown run and a refusal with the same 404, so a
   * caller without a token cannot learn which run ids exist.
   */
  mayRead(request: Request, durable: Durable, id: string): boolean;
  /** What is left of this invocation for engine work: the platform's deadline, else maxDuration. */
  budgetMs(startedAt: number): number;
  /**
   * Advances the run after the answer. The promise starts now and is handed to `waitUntil`, which
   * only keeps it alive on Vercel: under `next start` it runs anyway, in the same process.
   */
  advanceAfterResponse(durable: Durable, runId: string, startedAt: number): void;
  /** Keeps `work` alive past the answer (waitUntil) and lets `idle()` wait for it. */
  afterResponse(work: Promise<void>): void;
  /** Resolves once every piece of post-response work started so far has settled. */
  idle(): Promise<void>;
  /** The handler with everything it throws mapped to the one error body. */
  guard<A extends unknown[]>(
    fn: (request: Request, ...rest: A) => Promise<Response>,
  ): (request: Request, ...rest: A) => Promise<Response>;
}

// The answers every route builds: JSON with no caching, refusals decided before the durable call,
// and 405 for the methods a route does not answer. The error codes of the taxonomy map to statuses
// in `../error-response.ts` only (docs/decisions.md, "Errors").

const HEADERS = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };

/** A JSON answer that no cache keeps. */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { ...HEADERS, ...headers } });

/** An answer decided before the durable call: its status, code and message are the response. */
export class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** Any route's handler: the request, and what Next.js passes a dynamic segment (the chat routes'). */
type AnyRouteHandler = (request: Request, context: never) => Promise<Response>;

/** The given methods; every other one answers 405 with the error body and an `allow` header. */
export function allowOnly<H extends Handler | RunHandler | CallbackHandler | AnyRouteHandler>(
  handlers: Partial<Methods<H>>,
): Methods<H> {
  const allowed = Object.keys(handlers);
  const message = `this route answers ${allowed.join(" and ")} only`;
  // Every handler reads the request's headers before it answers, this one too: reading them is what
  // tells Next.js the answer belongs to the request, so no durable route is prerendered at build or
  // cached (docs/guide/http-routes.md, "Route files under today's Next.js defaults").
  const notAllowed = (async (request: Request) => {
    void request.headers.get("authorization");
    return json(405, { error: { code: "method_not_allowed", message } }, { allow: allowed.join(", ") });
  }) as unknown as H;
  return { GET: notAllowed, POST: notAllowed, PUT: notAllowed, PATCH: notAllowed, DELETE: notAllowed, ...handlers };
}

// Only a single space and visible ASCII: "Bearer  x", tabs or trailing junk are not the secret.
function bearerOf(request: Request): string | null {
  const match = /^Bearer ([\x21-\x7e]+)$/i.exec(request.headers.get("authorization") ?? "");
  return match ? match[1]! : null;
}

export function createRouteContext(getDurable: () => Promise<Durable>, options: DurableRoutesOptions): RouteContext {
  const maxDurationMs = (options.maxDuration ?? 60) * 1000;
  const marginMs = options.budgetMarginMs ?? 5000;
  const log = options.log ?? defaultRouteLog;
  const deadlineOf = options.getDeadline ?? vercelDeadline;
  const keepAlive = options.waitUntil ?? vercelWaitUntil;
  const inFlight = new Set<Promise<void>>();
  const secret = (name: SecretName) => resolveSecret(name, options.secrets?.[name], log);
  const budgetMs = (startedAt: number) => {
    const deadline = deadlineOf()?.getTime() ?? startedAt + maxDurationMs;
    return Math.max(0, deadline - Date.now() - marginMs);
  };

  function afterResponse(work: Promise<void>) {
    const task: Promise<void> = work.finally(() => inFlight.delete(task));
    inFlight.add(task);
    try {
      keepAlive(task);
    } catch {
      // Never let the platform hook turn a success into an error; the task runs regardless.
    }
  }

  return {
    durable: getDurable,
    options,
    maxBody: options.maxBodyBytes ?? MAX_BODY_BYTES,
    log,
    secret,
    budgetMs,
    afterResponse,
    requireBearer(request, name) {
      const expected = acceptedSecrets(typeof name === "string" ? [name] : name, secret);
      const token = bearerOf(request);
      if (token === null || !matchesAnySecret(token, expected))
        throw new UnauthorizedError("missing or wrong credentials");
    },
    mayRead(request, durable, id) {
      const token = bearerOf(request);
      return token !== null && matchesAnySecret(token, [secret("durable"), durable.statusToken(id)]);
    },
    advanceAfterResponse(durable, runId, startedAt) {
      afterResponse(
        (async () => {
          await new Promise((resolve) => setImmediate(resolve)); // let the answer go out first
          // A parent that parks on the children it started has them run now, not at the next tick.
          await durable.advance(runId, { budgetMs: budgetMs(startedAt), children: true });
        })().catch((e) => log(`advancing run "${runId}" after the response failed: ${(e as Error)?.stack ?? e}`)),
      );
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    guard:
      (fn) =>
      async (request, ...rest) => {
        try {
          return await fn(request, ...rest);
        } catch (e) {
          return answerError(e, request, log);
        }
      },
  };
}

/**
 * The secrets a bearer may be, of `names`: one unset in production (MissingSecretError) is left out,
 * so a route that takes either of two secrets works with one set; with none set, the first error
 * stands (503). An unset secret never matches: the check stays closed.
 */
function acceptedSecrets(names: readonly SecretName[], secret: (name: SecretName) => string): string[] {
  const accepted: string[] = [];
  let missing: unknown = null;
  for (const name of names) {
    try {
      accepted.push(secret(name));
    } catch (e) {
      if (!(e instanceof MissingSecretError) || names.length === 1) throw e;
      if (missing === null) missing = e;
    }
  }
  if (accepted.length === 0) throw missing;
  return accepted;
}

/**
 * The deployment faults logged so far (by message): each 503 is logged once, at the first request
 * it refuses, so the log says why the app answers 503 without repeating it for every request.
 */
const loggedFaults = new Set<string>();

/** Maps anything thrown to the one error body; unknown errors are logged and never leak. */
export function answerError(e: unknown, request: Request, log: (message: string) => void): Response {
  const where = `${request.method} ${new URL(request.url).pathname}`;
  const status = e instanceof HttpRefusal ? e.status : httpStatusOf(e);
  if (status === 503 && !loggedFaults.has((e as Error).message)) {
    loggedFaults.add((e as Error).message);
    log(`${where} answered 503 (logged once): ${(e as Error).message}`);
  }
  if (e instanceof HttpRefusal) return json(e.status, { error: { code: e.code, message: e.message, ...e.extra } });
  if (status === 500) log(`${where} failed: ${(e as Error)?.stack ?? e}`);
  const body = errorBody(e);
  if (InvalidInputError.is(e) && e.issues !== undefined) Object.assign(body.error, { issues: e.issues });
  return json(status, body);
}

/** What the routes log with when not given `log`. */
export const defaultRouteLog = (message: string) => console.warn(`[durable] ${message}`);

/**
 * An app's own route handler, its errors answered as the durable routes answer theirs: the one
 * error body, a deployment fault (a secret unset in production) 503 with its words and one log
 * line, anything unknown 500 `internal`, logged and never leaked.
 *
 * @example
 * // app/chat/new/route.ts
 * export const GET = guardRoute((request: NextRequest) => newChatRedirect(request));
 */
export function guardRoute<R extends Request, A extends unknown[]>(
  fn: (request: R, ...rest: A) => Response | Promise<Response>,
  log: (message: string) => void = defaultRouteLog,
): (request: R, ...rest: A) => Promise<Response> {
  return async (request, ...rest) => {
    try {
      return await fn(request, ...rest);
    } catch (e) {
      return answerError(e, request, log);
    }
  };
}
