import { type MigrationSource, applyMigrations } from "./apply-migrations";
import { functionSet, migrations } from "./migrations.generated";
import type { DurableDb } from "./tables";

/**
 * Brings the database up to this release (store/apply-migrations.ts): the numbered migrations
 * not yet recorded, then the SQL function set when its revision is newer than the database's, in
 * one transaction under the migration lock. Returns the names of the migrations it applied.
 * `source` is for tests (an older or a newer set); the app passes none.
 */
export function migrate(db: DurableDb, source: MigrationSource = { migrations, functionSet }): Promise<string[]> {
  return applyMigrations(db, source);
}
