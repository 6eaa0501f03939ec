// What the chaos scenarios wait on: a condition of the harness, and the runs not yet terminal.
import { sql, type Kysely } from "kysely";
import { sleep } from "./scenario-support";

// A condition that holds costs no more for being allowed longer: a worker process takes tens of seconds to start
// on a loaded machine (20 s was not enough for scenario 4's frozen owners beside a test suite and a CPU hog).
export async function until(condition: () => boolean, timeoutMs = 180_000) {
  const end = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > end) throw new Error("chaos: condition not reached in time");
    await sleep(20);
  }
}

export const unfinished = async (db: Kysely<any>) =>
  Number(
    (
      await sql<{
        n: number;
      }>`select count(*)::int as n from durable_runs where status not in ('completed', 'failed', 'cancelled')`.execute(
        db,
      )
    ).rows[0]!.n,
  );
