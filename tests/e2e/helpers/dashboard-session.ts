// Signs a browser context in to the reference app's dashboard under `next start`, where the pages
// and server actions ask for it (docs/guide/dashboard.md, "Who may operate it"): the cookie the
// sign-in form sets, made with the same secret. tests/e2e/operations-dashboard.test.ts signs in
// through the form itself; the other browser tests only need to be signed in.
import type { BrowserContext } from "playwright-core";
import { DASHBOARD_COOKIE, newSessionValue } from "@/app/dashboard-session";

export async function signInCookie(context: BrowserContext, baseUrl: string, secret: string): Promise<void> {
  await context.addCookies([
    { name: DASHBOARD_COOKIE, value: newSessionValue(secret), url: baseUrl, httpOnly: true, sameSite: "Strict" },
  ]);
}
