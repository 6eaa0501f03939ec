// Cold-start entry for our toolkit (bundled by scripts/bench/cold-start.ts, run as `node <bundle>`):
// connect with the pg driver, start one run of 3 `run` steps (each one insert into bench_receipts,
// a plain pool query), advance it to completion, close, exit. The database is migrated beforehand
// (a deployment migrates once, not per invocation). Prints its phase marks as one JSON line.
import { sql } from "kysely";
import * as z from "zod";
import { connect, createDurable, defineWorkflow } from "../../../lib/durable";
import { type Marks, printMarks, runEntry } from "./marks";

runEntry(async (marks: Partial<Marks>) => {
  const url = process.env.BENCH_DATABASE_URL!;
  const job = process.env.BENCH_JOB!;

  const db = await connect(url, { driver: "pg" });
  const receipts = defineWorkflow({
    name: "cold-start",
    input: z.object({ job: z.string() }),
    async run(ctx, input) {
      let last = 0;
      for (const step of [1, 2, 3]) {
        last = await ctx.step.run(`insert-${step}`, async () => {
          await sql`insert into bench_receipts (job, step) values (${input.job}, ${step})`.execute(db);
          return step;
        });
      }
      return { steps: last };
    },
  });
  const durable = createDurable({ db, workflows: [receipts], secrets: { durable: "bench" }, log: () => {} });
  marks.connected = performance.now();

  const { id } = await durable.start(receipts, { job }, { id: job });
  const outcome = await durable.advance(id);
  if (outcome !== "completed") throw new Error(`run ${id}: advance returned ${outcome}`);
  marks.ran = performance.now();

  await durable.close();
  marks.closed = performance.now();
  printMarks(marks);
});
