// Next.js calls register() once when the server starts.
export async function register() {
  // Under `next dev` only: a local stand-in for Vercel Cron that calls /api/durable/tick every few
  // seconds (DURABLE_DEV_CRON_MS), so sleeps and retry delays come due with nothing else running.
  // The condition is compiled away in production builds, where Vercel Cron calls the route.
  if (process.env.NEXT_RUNTIME === "nodejs" && process.env.NODE_ENV === "development") {
    const { startDevCron } = await import("@/lib/durable/next");
    startDevCron();
  }
}
