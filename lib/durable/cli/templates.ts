// The files written whole into an app, by `durable-next init` and by this repository's
// add-to-app: the instance file (the app's workflow registry), a next.config when the app has
// none, and an instrumentation file that starts the local cron under `next dev`. `lib` is where
// the app imports the toolkit from: "durable-next" for the package, a relative path to a copy.

/** The line of the instance file where workflows are registered (tests and the docs find it). */
export const WORKFLOWS_MARKER = "// register your workflows here";

export interface InstanceImports {
  /** The toolkit as the instance file imports it. */
  lib: string;
  /** The same from a file in the workflows folder beside it. */
  libFromWorkflows: string;
  /** TypeScript (app/durable.ts) or JavaScript (app/durable.js). */
  typescript?: boolean;
}

/** The workflow example every instance file shows. */
const example = (libFromWorkflows: string, ext: string) => `/**
 * The workflows this app runs: register each one here and every durable route knows it.
 *
 * @example
 * // ./workflows/welcome.${ext}, next to this file
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
 */`;

/** The app's durable instance: the same shape as this repository's app/durable.ts, with no workflows yet. */
export function instanceFile({ lib, libFromWorkflows, typescript = true }: InstanceImports): string {
  const registry = typescript
    ? `export const workflows: DurableOptions["workflows"] = [`
    : `/** @type {import("${lib}").DurableOptions["workflows"]} */\nexport const workflows = [`;
  return `import { createAppDurable${typescript ? ", type DurableOptions" : ""} } from "${lib}";
import { createDurableRoutes } from "${lib}/next";
// import { welcome } from "./workflows/welcome";

${example(libFromWorkflows, typescript ? "ts" : "js")}
${registry}
  ${WORKFLOWS_MARKER}
];

/** The app's durable instance: use it from server code to start runs, send signals, read status. */
// DATABASE_URL: Neon or any Postgres; unset, PGlite in ./.durable/ (development).
export const getDurable = createAppDurable({ workflows });

/** The handlers mounted by app/api/durable/**; maxDuration matches what the route files export. */
export const routes = createDurableRoutes(getDurable, { maxDuration: 60 });
`;
}

/** Why next.config gets each setting, said once in the file it writes. */
const NEXT_CONFIG_BODY = `  // PGlite (the embedded Postgres used when DATABASE_URL is unset) loads its WebAssembly from
  // its package folder at run time: the server must require it from node_modules, not a bundle.
  serverExternalPackages: ["@electric-sql/pglite"],
  // next dev serves its dev resources only to the host it was started for: a page opened at
  // 127.0.0.1 would render but never hydrate.
  allowedDevOrigins: ["localhost", "127.0.0.1"],`;

export function nextConfigFile(typescript: boolean): string {
  return typescript
    ? `import type { NextConfig } from "next";

const nextConfig: NextConfig = {
${NEXT_CONFIG_BODY}
};

export default nextConfig;
`
    : `/** @type {import('next').NextConfig} */
const nextConfig = {
${NEXT_CONFIG_BODY}
};

export default nextConfig;
`;
}

/** The call that starts the local cron under `next dev`, as it goes into register(); `next` is the next entry. */
export const devCronCall = (next: string) =>
  `if (process.env.NEXT_RUNTIME === "nodejs" && process.env.NODE_ENV === "development") {
    const { startDevCron } = await import("${next}");
    startDevCron();
  }`;

/** instrumentation.ts (or .js) next to app/: Next.js calls register() once when the server starts. */
export function instrumentationFile(next: string): string {
  return `// Next.js calls register() once when the server starts.
export async function register() {
  // Under \`next dev\` only: a local stand-in for Vercel Cron that calls /api/durable/tick when the
  // next run wakes and at least every 5 s (DURABLE_DEV_CRON_MS; DURABLE_DEV_CRON=off stops it), so
  // sleeps and retry delays end on time with nothing else running. Compiled away in production
  // builds, where Vercel Cron calls the route. next dev logs each call; to hide them, add to
  // next.config:
  //   logging: { incomingRequests: { ignore: [/^\\/api\\/durable\\/tick/] } }
  ${devCronCall(next)}
}
`;
}
