import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

export default defineConfig({
  resolve: { alias: { "@": fileURLToPath(new URL("./", import.meta.url)) } },
  test: {
    include: ["tests/**/*.test.ts"],
    // Type tests (tests/types/*.test-d.ts): tsc over tests/types/tsconfig.json, beside the runtime tests.
    typecheck: { enabled: true, include: ["tests/types/**/*.test-d.ts"], tsconfig: "tests/types/tsconfig.json" },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // PGlite instances are ~400 MB each: keep the number of parallel files modest on 2 cores.
    maxWorkers: 2,
    // In-memory PGlite from one initdb snapshot (tests/helpers/pglite-snapshot.ts), and a folder per
    // run for what the end-to-end files share (tests/e2e/helpers/run-cache.ts).
    setupFiles: ["tests/helpers/pglite-snapshot.ts"],
    globalSetup: ["tests/e2e/helpers/run-dir.ts"],
  },
});
