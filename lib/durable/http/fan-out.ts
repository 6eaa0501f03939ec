// Fan-out (docs/decisions.md, "Fan-out through the tick route"): a tick that finds more due runs
// than it can advance at once calls its own route again, so a backlog drains at the rate of
// several invocations.

/** The header that counts hops: a tick called by a tick carries 1 and calls no further one. */
export const HOP_HEADER = "x-durable-hop";

/** How many more tick invocations `due` runs call for, when one advances `perTick` at once. */
export function fanOutWidth(due: number, perTick: number, maxFanOut: number): number {
  return Math.max(0, Math.min(maxFanOut, Math.ceil(due / perTick) - 1));
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
