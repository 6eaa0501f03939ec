/**
 * The AI SDK, loaded the first time an AI step's body runs (or a chat's history is read): a workflow
 * that never calls a model never loads it, and a replay answered from receipts does not either
 * (docs/decisions.md). `ai` is an optional peer of the package (docs/guide/installing.md, "The entry
 * points and the packages they need"), so the bundler is told to leave this import to Node at run
 * time: an app without `ai` builds.
 */
export const loadAi = (): Promise<typeof import("ai")> =>
  import(/* webpackIgnore: true */ /* turbopackIgnore: true */ "ai");
