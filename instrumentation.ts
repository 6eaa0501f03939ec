import { registerOTel } from "@vercel/otel";

// Next.js calls register() once when the server starts.
export async function register() {
  // OpenTelemetry, as Vercel documents it: the engine's durable.invocation, durable.run and
  // durable.step spans (README, "Tracing") nest under the request's span, and go to the project's
  // tracing integration on Vercel, or to an OTLP endpoint set by OTEL_EXPORTER_OTLP_* elsewhere.
  // OTEL_SDK_DISABLED=true turns it off.
  registerOTel({ serviceName: "durable-next" });

  // Under `next dev` only: a local stand-in for Vercel Cron that calls /api/durable/tick when the
  // next run wakes and at least every 5 s (DURABLE_DEV_CRON_MS), so sleeps and retry delays end on
  // time with nothing else running.
  // The condition is compiled away in production builds, where Vercel Cron calls the route.
  if (process.env.NEXT_RUNTIME === "nodejs" && process.env.NODE_ENV === "development") {
    const { startDevCron } = await import("@/lib/durable/next");
    startDevCron();
  }
}
