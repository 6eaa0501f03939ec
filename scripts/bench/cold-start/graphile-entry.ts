// Cold-start entry for graphile-worker (bundled by scripts/bench/cold-start.ts, run as
// `node <bundle>`): add one job, then `runOnce` a worker whose task does 3 inserts into
// bench_receipts, exit. `makeWorkerUtils` + `addJob` + `release` is what `quickAddJob` does, split
// so the connection (and graphile-worker's migration check) shows as its own phase. Both calls open
// a pool of their own from the connection string, as the documented one-shot use does. Prints its
// phase marks as one JSON line.
import { Logger, makeWorkerUtils, runOnce } from "graphile-worker";
import { type Marks, printMarks, runEntry } from "./marks";

runEntry(async (marks: Partial<Marks>) => {
  const connectionString = process.env.BENCH_DATABASE_URL!;
  const job = process.env.BENCH_JOB!;
  // Silent, as the durable entry's `log: () => {}`.
  const logger = new Logger(() => () => {});

  const utils = await makeWorkerUtils({ connectionString, logger });
  marks.connected = performance.now();

  await utils.addJob("receipts", { job });
  await utils.release();
  await runOnce({
    connectionString,
    logger,
    noHandleSignals: true,
    taskList: {
      receipts: async (payload, helpers) => {
        const { job } = payload as { job: string };
        for (const step of [1, 2, 3]) {
          await helpers.query("insert into bench_receipts (job, step) values ($1, $2)", [job, step]);
        }
      },
    },
  });
  marks.ran = performance.now();

  // runOnce ends its own pool (and release() the utils'): nothing is left to close.
  marks.closed = performance.now();
  printMarks(marks);
});
