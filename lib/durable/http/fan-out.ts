import type { Durable } from "../engine/create-durable";
import { InvalidInputError } from "../errors";
import type { RouteContext } from "./routes/route-context";

// Fan-out (docs/decisions.md, "Fan-out through the tick route"): a tick that finds more due runs
// than it can advance at once calls its own route again, so a backlog drains at the rate of
// several invocations.

/** The header that counts hops: a tick called by a tick carries 1 and calls no further one. */
export const HOP_HEADER = "x-durable-hop";

/** How many more tick invocations `due` runs call for, when one advances `perTick` at once. */
export function fanOutWidth(due: number, perTick: number, maxFanOut: number): number {
  return Math.max(0, Math.min(maxFanOut, Math.ceil(due / perTick) - 1));
}

/** maxFanOut (option or DURABLE_MAX_FAN_OUT): a whole number from 0 to 64. */
export function fanOutLimit(value: number | string | undefined): number {
  if (value === undefined || value === "") return 0;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 0 || limit > 64) {
    throw new InvalidInputError(`maxFanOut (DURABLE_MAX_FAN_OUT) is a whole number from 0 to 64, not "${value}"`);
  }
  return limit;
}

/**
 * The requests that fan a tick out: GET to the same route with the cron bearer and hop 1, and
 * Vercel's protection bypass when VERCEL_AUTOMATION_BYPASS_SECRET is set (a protected deployment
 * refuses its own calls otherwise).
 */
export function fanOutRequest(tickUrl: string, cronSecret: string): Request {
  const url = new URL(tickUrl);
  url.search = "";
  url.hash = "";
  const headers: Record<string, string> = { authorization: `Bearer ${cronSecret}`, [HOP_HEADER]: "1" };
  const bypass = process.env.VERCEL_AUTOMATION_BYPASS_SECRET;
  if (bypass) headers["x-vercel-protection-bypass"] = bypass;
  return new Request(url, { method: "GET", headers });
}

/**
 * Calls the tick route `fanOutWidth` more times when due runs outnumber what one tick advances
 * at once; each call is left running past the answer. Answers how many were called.
 */
export async function fanOutTicks(
  ctx: RouteContext,
  request: Request,
  durable: Durable,
  maxFanOut: number,
): Promise<number> {
  const send = ctx.options.fetch ?? ((call: Request) => fetch(call));
  const perTick = durable.tickConcurrency;
  const due = await durable.countDue({ max: perTick * (maxFanOut + 1) });
  const width = fanOutWidth(due, perTick, maxFanOut);
  for (let i = 0; i < width; i++) {
    const call = fanOutRequest(request.url, ctx.secret("cron"));
    ctx.afterResponse(
      send(call)
        .then(async (response) => {
          await response.text();
          if (!response.ok) ctx.log(`a fanned-out tick answered ${response.status}`);
        })
        .catch((e) => ctx.log(`a fanned-out tick failed: ${(e as Error)?.message ?? e}`)),
    );
  }
  return width;
}
