// The delaying proxy's child process (started by startDelayProxy in scripts/bench/delay-proxy.ts):
// serves the proxy, tells the parent its port, sets its delay when calibrated, answers its
// round-trip counter and exits on "close".
import { serveDelayProxy } from "./delay-proxy";

const proxy = await serveDelayProxy({
  rttMs: Number(process.env.BENCH_PROXY_RTT_MS),
  targetHost: process.env.BENCH_PROXY_TARGET_HOST!,
  targetPort: Number(process.env.BENCH_PROXY_TARGET_PORT),
});
process.send!({ type: "listening", port: proxy.port });
process.on("message", async (message: { type: string }) => {
  if (message.type === "setRtt") {
    proxy.setRtt((message as { type: string; ms: number }).ms);
    process.send!({ type: "set" });
  } else if (message.type === "roundTrips") process.send!({ type: "roundTrips", count: proxy.roundTrips() });
  else if (message.type === "close") {
    await proxy.close();
    process.disconnect();
    process.exit(0);
  }
});
// The parent gone: nothing left to serve.
process.on("disconnect", () => process.exit(0));
