import type { NextConfig } from "next";

const config: NextConfig = {
  // PGlite loads its WebAssembly and data files from its own package folder at runtime: bundling
  // it breaks those paths, so the server requires it from node_modules instead.
  serverExternalPackages: ["@electric-sql/pglite"],
  // `next dev` serves its HMR socket and dev chunks only to pages opened on the host it was started
  // for (localhost unless -H says otherwise). A page opened at 127.0.0.1 would render but never
  // hydrate: both addresses are this machine, so both may load the dev resources.
  allowedDevOrigins: ["localhost", "127.0.0.1"],
  // Under `next dev` the local cron (instrumentation.ts) calls the tick every few seconds and prints
  // its report when it claimed something, so the request line itself is only noise.
  logging: { incomingRequests: { ignore: [/^\/api\/durable\/tick(\?|$)/] } },
};

export default config;
