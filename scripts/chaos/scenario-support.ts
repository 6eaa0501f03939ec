// What the chaos scenarios share (scenarios.ts and the scenario files beside it): a scenario's
// scale and result, starting runs of the chaos workflow, counting events, and waiting.
import { sql, type Kysely } from "kysely";
import { createDurable } from "../../lib/durable";
import type { Expectation, InvariantResult } from "./invariants";
import { chaosOrder } from "./workflow";
import type { Worker } from "./workers";

export interface Scale {
  full: boolean;
  seed: number;
}

export interface ScenarioResult {
  id: string;
  name: string;
  db: Kysely<any>;
  counts: Record<string, number>;
  /** Problems the scenario itself saw (a failpoint never reached, runs that never finished). */
  problems: string[];
  /** What I1–I10 expect of its runs, when not chaosExpectation (workflow.ts). */
  expectation?: Expectation;
  /** Invariants of its own, checked after I1–I10. */
  invariants?: (db: Kysely<any>) => Promise<InvariantResult[]>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const mark = (label: string) =>
  process.env.CHAOS_DEBUG && console.error(`[chaos ${Math.round(performance.now())} ms] ${label}`);

export async function startRuns(
  db: Kysely<any>,
  count: number,
  work: (i: number) => [number, number] = () => [0, 0],
  prefix = "run",
) {
  const durable = createDurable({ db, workflows: [chaosOrder], secrets: { durable: "chaos" }, log: () => {} });
  for (let i = 0; i < count; i += 500) {
    const batch = Array.from({ length: Math.min(500, count - i) }, (_, j) => i + j);
    await Promise.all(
      batch.map((k) => durable.start(chaosOrder, { work: work(k) }, { id: `${prefix}-${String(k).padStart(6, "0")}` })),
    );
  }
}

export const events = async (db: Kysely<any>, kinds: string[]) =>
  Number(
    (
      await sql<{ n: number }>`
        select count(*)::int as n from durable_events
        where kind in (select jsonb_array_elements_text(${JSON.stringify(kinds)}::jsonb))`.execute(db)
    ).rows[0]!.n,
  );

/** A worker that has started its tick loop (worker.ts prints READY). */
export const ready = (worker: Worker) => worker.output().includes("READY");
