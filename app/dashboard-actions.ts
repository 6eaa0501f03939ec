"use server";
// Signing in to the dashboard with the admin secret, and out (docs/guide/dashboard.md, "Who may
// operate it"). The cookie is HttpOnly (no script reads it), SameSite=Strict (no other site's page
// sends it along), Secure when the request came over https, and holds a MAC, never the secret.
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { dashboardEnabled, incomingRequest } from "./dashboard-access";
import { adminSecret, DASHBOARD_COOKIE, isAdminSecret, newSessionValue, SESSION_MS } from "./dashboard-session";

export interface SignInResult {
  message: string;
}

/** Where to go after signing in: a path of this app, never another origin ("//host", "/\\host"). */
function nextPath(value: FormDataEntryValue | null): string {
  if (typeof value !== "string" || value.length > 2000) return "/";
  return /^\/(?![/\\])/.test(value) ? value : "/";
}

/** Checks the typed secret; right, sets the session cookie and opens the page the form was on. */
export async function signIn(_previous: SignInResult | null, form: FormData): Promise<SignInResult> {
  if (!dashboardEnabled()) return { message: "The dashboard is off in this deployment." };
  const secret = adminSecret();
  if (secret === null) return { message: "DURABLE_SECRET is not set here, so nobody can sign in." };
  const given = form instanceof FormData ? form.get("secret") : null;
  if (typeof given !== "string" || given.length === 0 || given.length > 1000 || !isAdminSecret(given, secret)) {
    return { message: "That is not the admin secret." };
  }
  const secure = new URL((await incomingRequest()).url).protocol === "https:";
  (await cookies()).set(DASHBOARD_COOKIE, newSessionValue(secret), {
    httpOnly: true,
    secure,
    sameSite: "strict",
    path: "/",
    maxAge: SESSION_MS / 1000,
  });
  redirect(nextPath(form.get("next")));
}

/** Forgets the session cookie. */
export async function signOut(): Promise<void> {
  (await cookies()).delete(DASHBOARD_COOKIE);
  redirect("/");
}
