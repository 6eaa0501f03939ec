// Who may operate the dashboard in production (docs/guide/dashboard.md, "Who may operate it").
// This file is the app's to edit: the dashboard's pages and every one of its server actions ask
// `authorizeDashboard` first, and fall back to the sign-in with DURABLE_SECRET when it says no.

/**
 * Whether this request comes from someone the app lets operate the runs (start, signal, cancel,
 * retry and fork any run). Read your own session here, the way your pages do:
 *
 * ```ts
 * import { auth } from "@/auth"; // Auth.js, Clerk, your own session…
 * export async function authorizeDashboard(request: Request) {
 *   const session = await auth();
 *   return session?.user?.role === "admin";
 * }
 * ```
 *
 * A deployment that is private by other means (Vercel Deployment Protection, a VPN) may return
 * true. `request` carries the incoming headers and cookies; its URL is the origin only (a server
 * action does not know the page it was sent from). Under `next dev` it is not asked.
 *
 * The reference app has no session of its own, so it says no, and the admin signs in with
 * DURABLE_SECRET instead (app/dashboard-session.ts).
 */
export async function authorizeDashboard(_request: Request): Promise<boolean> {
  return false;
}
