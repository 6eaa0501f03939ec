// `durable-next migrate`: migrates the database DATABASE_URL names (the numbered migrations, then
// the SQL function set when its revision is newer; docs/guide/databases.md, "Migrating"), for a
// deploy step. The app migrates on first use too; this moves the work (and any failure) to the
// deploy. Exit code 0 when the database is current, 2 when DATABASE_URL is unset or not a
// postgres URL, 1 when the database cannot be reached or a migration fails. The password is never
// printed.

/** How long the database may take to answer before the command gives up. */
const ANSWER_WITHIN_MS = 30_000;

/** The URL with its password hidden, for messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(not a URL)";
  }
}

export interface MigrateResult {
  code: 0 | 1 | 2;
  /** What to print: to stdout with code 0, else to stderr. */
  message: string;
}

/** Runs the migrations on `env.DATABASE_URL`; never throws. */
export async function runMigrate(env: NodeJS.ProcessEnv = process.env): Promise<MigrateResult> {
  const url = env.DATABASE_URL?.trim();
  if (!url)
    return {
      code: 2,
      message:
        "DATABASE_URL is not set: set it to the database to migrate, e.g.\n" +
        "  DATABASE_URL=postgres://user:password@host/db npx durable-next migrate",
    };
  if (!/^postgres(ql)?:\/\//.test(url))
    return { code: 2, message: `DATABASE_URL is not a postgres:// or postgresql:// URL (${redactedUrl(url)})` };
  const where = redactedUrl(url);
  // The toolkit loads only for this command: init stays a few Node modules.
  const { connect, createDurable } = await import("../index");
  let db: Awaited<ReturnType<typeof connect>> | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    db = await connect(url);
    const durable = createDurable({ db, workflows: [] });
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ANSWER_WITHIN_MS / 1000} s`)), ANSWER_WITHIN_MS);
    });
    const applied = await Promise.race([durable.migrate(), late]);
    const what = applied.length === 0 ? "no new migration" : `applied ${applied.join(", ")}`;
    return { code: 0, message: `${where}: up to date (${what}; the SQL functions at this release's revision)` };
  } catch (e) {
    const reason = (e as Error)?.message || String(e);
    return { code: 1, message: `could not migrate ${where}: ${reason.split(url).join(where)}` };
  } finally {
    clearTimeout(timer);
    await db?.destroy().catch(() => {});
  }
}
