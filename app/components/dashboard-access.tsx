/**
 * The dashboard's pages and server actions act as the admin (they start, signal, cancel and retry
 * any run) without asking who is there. So in production they are off unless DURABLE_DASHBOARD=on
 * says the deployment is private (Vercel Deployment Protection, a VPN, your own auth in front).
 * `npm run dev` always has them.
 */
export function dashboardEnabled(): boolean {
  return process.env.NODE_ENV !== "production" || process.env.DURABLE_DASHBOARD === "on";
}

export function assertDashboardEnabled(): void {
  if (!dashboardEnabled()) throw new Error("the dashboard is off in production: set DURABLE_DASHBOARD=on");
}

export function DashboardOff() {
  return (
    <section className="panel notice">
      <h1>The dashboard is off</h1>
      <p>
        Its pages and buttons act as the admin: they start, signal, cancel and retry any run. In production they stay
        off until you put the deployment behind access control (for example Vercel Deployment Protection) and set{" "}
        <code>DURABLE_DASHBOARD=on</code>.
      </p>
      <p>
        The API is on either way: <code>/api/durable/runs</code> with <code>Authorization: Bearer $DURABLE_SECRET</code>
        .
      </p>
    </section>
  );
}
