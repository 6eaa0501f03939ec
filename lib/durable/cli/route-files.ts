// The route files `durable-next init` writes under app/api/durable: the same text as the reference
// app's own (tests/unit/init.test.ts compares them), each a thin file over the app's instance.
// They export `maxDuration` and no other segment config: today's create-next-app turns on
// cacheComponents, which refuses `runtime` (docs/guide/http-routes.md, "Route files under today's
// Next.js defaults").
import path from "node:path";

/** Path under app/api/durable → the member of `routes` (createDurableRoutes) it mounts. */
export const ROUTES: Readonly<Record<string, string>> = {
  "callback/[token]/route.ts": "callback",
  "events/[source]/route.ts": "events",
  "metrics/route.ts": "metrics",
  "runs/route.ts": "runs",
  "runs/[id]/route.ts": "run",
  "runs/[id]/cancel/route.ts": "cancel",
  "runs/[id]/retry/route.ts": "retry",
  "runs/[id]/stream/route.ts": "stream",
  "signal/route.ts": "signal",
  "tick/route.ts": "tick",
};

/** The instance as the reference app's route files import it, through its `@/` alias. */
export const ALIASED_INSTANCE = "@/app/durable";

/** One route file's text; `instance` is the module the file imports `routes` from. */
export const routeFile = (name: string, instance: string) => `import { routes } from "${instance}";

export const maxDuration = 60;
export const { GET, POST, PUT, PATCH, DELETE } = routes.${name};
`;

export interface RouteFile {
  /** Path in the app, with `/`. */
  dest: string;
  content: string;
}

/**
 * The ten route files for an app whose app/ is under `base` ("" or "src/"): they import the
 * instance through `@/app/durable` when the app's `@/` alias reaches it, else by a relative path.
 */
export function routeFiles(base: string, aliased: boolean, ext: "ts" | "js" = "ts"): RouteFile[] {
  const instance = `${base}app/durable`;
  return Object.entries(ROUTES).map(([rel, name]) => {
    const dest = `${base}app/api/durable/${rel.replace(/\.ts$/, `.${ext}`)}`;
    const relative = path.posix.relative(path.posix.dirname(dest), instance);
    return { dest, content: routeFile(name, aliased ? ALIASED_INSTANCE : relative) };
  });
}
