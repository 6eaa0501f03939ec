import type { DashboardAccess } from "../dashboard-access";
import { DashboardSignIn } from "./dashboard-sign-in";

// Who may see and operate the dashboard is decided in app/dashboard-access.ts; these are what a
// page shows instead of itself when the answer is no.

/** What a page shows instead of itself: the notice that it is off, or the sign-in. */
export function DashboardClosed({ access, next }: { access: Exclude<DashboardAccess, "open">; next: string }) {
  return access === "off" ? <DashboardOff /> : <DashboardSignIn next={next} />;
}

export function DashboardOff() {
  return (
    <section className="panel notice">
      <h1>The dashboard is off</h1>
      <p>
        Its pages and buttons act as the admin: they start, signal, cancel and retry any run. In production they stay
        off until you set <code>DURABLE_DASHBOARD=on</code>; then they ask for a sign-in with the admin secret, or for
        your app&apos;s own authorization (<code>app/dashboard-auth.ts</code>).
      </p>
      <p>
        The API is on either way: <code>/api/durable/runs</code> with <code>Authorization: Bearer $DURABLE_SECRET</code>
        .
      </p>
    </section>
  );
}
