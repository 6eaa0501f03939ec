import { cookies, headers } from "next/headers";
import { UnauthorizedError } from "@/lib/durable";
import { authorizeDashboard } from "./dashboard-auth";
import { adminSecret, DASHBOARD_COOKIE, isValidSession } from "./dashboard-session";

/**
 * The dashboard's pages and server actions act as the admin (they start, signal, cancel, retry
 * and fork any run). So in production they are off unless DURABLE_DASHBOARD=on, and on they answer
 * only a request the app authorizes (app/dashboard-auth.ts) or one signed in with the admin secret
 * (app/dashboard-session.ts); `npm run dev` always has them, without sign-in
 * (docs/guide/dashboard.md, "Who may operate it").
 */
export function dashboardEnabled(): boolean {
  return process.env.NODE_ENV !== "production" || process.env.DURABLE_DASHBOARD === "on";
}

/** "off": not in this deployment; "sign-in": on, but this request may not operate it; "open": it may. */
export type DashboardAccess = "off" | "sign-in" | "open";

/** The request as the app's hook reads it: its headers and cookies, at the origin it came to. */
export async function incomingRequest(): Promise<Request> {
  const given = await headers();
  const host = given.get("x-forwarded-host") ?? given.get("host") ?? "localhost";
  const protocol = given.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https" ? "https" : "http";
  return new Request(`${protocol}://${host}/`, { headers: new Headers(given) });
}

/** Whether this request may operate the dashboard; a page asks once, every server action again. */
export async function dashboardAccess(): Promise<DashboardAccess> {
  if (!dashboardEnabled()) return "off";
  if (process.env.NODE_ENV !== "production") return "open";
  const secret = adminSecret();
  const session = (await cookies()).get(DASHBOARD_COOKIE)?.value;
  if (secret !== null && isValidSession(session, secret)) return "open";
  return (await authorizeDashboard(await incomingRequest())) ? "open" : "sign-in";
}

/** Whether this request is signed in with the cookie (so the page offers Sign out). */
export async function signedInWithCookie(): Promise<boolean> {
  const secret = adminSecret();
  return secret !== null && isValidSession((await cookies()).get(DASHBOARD_COOKIE)?.value, secret);
}

/**
 * For every server action, first thing: a server action is a public endpoint that anyone may POST
 * to with its id, so the page having checked is not enough.
 * @throws UnauthorizedError unless the request may operate the dashboard
 */
export async function assertDashboardAccess(): Promise<void> {
  const access = await dashboardAccess();
  if (access === "off") throw new UnauthorizedError("the dashboard is off in production: set DURABLE_DASHBOARD=on");
  if (access === "sign-in") throw new UnauthorizedError("sign in to the dashboard first");
}
