import type { NextConfig } from "next";

const config: NextConfig = {
  // PGlite loads its WebAssembly and data files from its own package folder at runtime: bundling
  // it breaks those paths, so the server requires it from node_modules instead.
  serverExternalPackages: ["@electric-sql/pglite"],
};

export default config;
