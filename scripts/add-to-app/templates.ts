// The app-level instance file written into the other app: the same shape as this repository's
// app/durable.ts, without the demo's workflows and tables. `lib` is the relative path from the
// file to the copied lib/durable, `libFromWorkflows` the same from a file in the workflows folder.

export const WORKFLOWS_MARKER = "// register your workflows here";

export function instanceFile({ lib, libFromWorkflows }: { lib: string; libFromWorkflows: string }): string {
  return `import { createAppDurable, type DurableOptions } from "${lib}";
import { createDurableRoutes } from "${lib}/next";
// import { welcome } from "./workflows/welcome";

/**
 * The workflows this app runs: register each one here and every durable route knows it.
 *
 * @example
 * // ./workflows/welcome.ts, next to this file
 * import { z } from "zod";
 * import { defineWorkflow } from "${libFromWorkflows}";
 * export const welcome = defineWorkflow({
 *   name: "welcome",
 *   input: z.object({ email: z.string().email() }),
 *   async run(ctx, input) {
 *     await ctx.step.run("send", (s) => mailer.send({ to: input.email, idempotencyKey: s.externalKey }));
 *     await ctx.step.sleep("wait-a-day", "1d");
 *     return { sent: true };
 *   },
 * });
 */
export const workflows: DurableOptions["workflows"] = [
  ${WORKFLOWS_MARKER}
];

/** The app's durable instance: use it from server code to start runs, send signals, read status. */
// DATABASE_URL: Neon or any Postgres; unset, PGlite in ./.durable/ (development).
export const getDurable = createAppDurable({ workflows });

/** The handlers mounted by app/api/durable/**; maxDuration matches what the route files export. */
export const routes = createDurableRoutes(getDurable, { maxDuration: 60 });
`;
}

export function nextConfigFile(typescript: boolean): string {
  return typescript
    ? `import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // PGlite (the embedded Postgres used when DATABASE_URL is unset) loads its WebAssembly from its
  // package folder at run time: the server must require it from node_modules, not a bundle.
  serverExternalPackages: ["@electric-sql/pglite"],
};

export default nextConfig;
`
    : `/** @type {import('next').NextConfig} */
const nextConfig = {
  // PGlite (the embedded Postgres used when DATABASE_URL is unset) loads its WebAssembly from its
  // package folder at run time: the server must require it from node_modules, not a bundle.
  serverExternalPackages: ["@electric-sql/pglite"],
};

export default nextConfig;
`;
}

/** The call that starts the local cron under `next dev`, as it goes into register(). */
export const DEV_CRON_CALL = `if (process.env.NEXT_RUNTIME === "nodejs" && process.env.NODE_ENV === "development") {
    const { startDevCron } = await import("./lib/durable/next");
    startDevCron();
  }`;

/** instrumentation.ts (or .js) next to app/: Next.js calls register() once when the server starts. */
export function instrumentationFile(): string {
  return `// Next.js calls register() once when the server starts.
export async function register() {
  // Under \`next dev\` only: a local stand-in for Vercel Cron that calls /api/durable/tick every few
  // seconds (DURABLE_DEV_CRON_MS; DURABLE_DEV_CRON=off stops it), so sleeps and retry delays come
  // due with nothing else running. Compiled away in production builds, where Vercel Cron calls the
  // route. next dev logs each call; to hide them, add to next.config:
  //   logging: { incomingRequests: { ignore: [/^\\/api\\/durable\\/tick/] } }
  ${DEV_CRON_CALL}
}
`;
}
