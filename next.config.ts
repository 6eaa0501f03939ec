import type { NextConfig } from "next";

const config: NextConfig = {
  // PGlite loads its WebAssembly and data files from its own package folder at runtime: bundling
  // it breaks those paths, so the server requires it from node_modules instead.
  serverExternalPackages: ["@electric-sql/pglite"],
  // `npm run dev` calls the tick every few seconds; its report is printed by scripts/dev.mjs when
  // it claimed something, so the request line itself is only noise.
  logging: { incomingRequests: { ignore: [/^\/api\/durable\/tick(\?|$)/] } },
};

export default config;
