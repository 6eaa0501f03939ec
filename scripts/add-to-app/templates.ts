// The app-level instance file written into the other app: the same shape as this repository's
// app/durable.ts, without the demo's workflows and tables. `lib` is the relative path from the
// file to the copied lib/durable, `libFromWorkflows` the same from a file in the workflows folder.

export const WORKFLOWS_MARKER = "// register your workflows here";

export function instanceFile({ lib, libFromWorkflows }: { lib: string; libFromWorkflows: string }): string {
  return `import type { Kysely } from "kysely";
import { connect, createDurable, type Durable, type DurableOptions } from "${lib}";
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

// One database handle per process, kept on globalThis so dev reloads reuse it (two PGlite
// instances on one data dir would corrupt it). Migrated once, when first opened.
const DB_KEY = Symbol.for("durable-next.app.db");
type Holder = typeof globalThis & { [DB_KEY]?: Promise<Kysely<any>> };

function sharedDb(): Promise<Kysely<any>> {
  const holder = globalThis as Holder;
  let opening = holder[DB_KEY];
  if (!opening) {
    opening = (async () => {
      // DATABASE_URL: Neon or any Postgres; unset, PGlite in ./.durable/ (development).
      const db = await connect();
      try {
        await createDurable({ db, workflows: [] }).migrate();
        return db;
      } catch (e) {
        await db.destroy().catch(() => {});
        throw e;
      }
    })();
    holder[DB_KEY] = opening;
    // A failed open is not cached: the next request tries again.
    opening.catch(() => {
      if (holder[DB_KEY] === opening) delete holder[DB_KEY];
    });
  }
  return opening;
}

let instance: Promise<Durable> | undefined;

/** The app's durable instance: use it from server code to start runs, send signals, read status. */
export function getDurable(): Promise<Durable> {
  if (!instance) {
    const creating = sharedDb().then((db) => createDurable({ db, workflows }));
    instance = creating;
    creating.catch(() => {
      if (instance === creating) instance = undefined;
    });
  }
  return instance;
}

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
