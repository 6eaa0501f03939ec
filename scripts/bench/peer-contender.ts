// What the peers section (scripts/bench/peers.ts, docs/performance.md "Peers") asks of each system
// under test, and what their job bodies share: the receipts table, and the counter a body bumps
// as it writes its third receipt.
import type pg from "pg";
import { installedPeerVersion, type PeerPackage } from "./peer-packages";

/** The section's defaults: jobs per configuration and rounds (`--peer-jobs`, `--peer-rounds`). */
export const PEER_JOBS = 2_000;
export const PEER_ROUNDS = 3;
/** Receipts a job writes, each its own transaction: the steps that server CPU per step divides by. */
export const STEPS_PER_JOB = 3;

export type PeerName = "durable" | "graphile-worker" | "pg-boss" | "dbos";

/** Where a contender connects: `direct` for setup, enqueueing and counting; `worker` for its workers. */
export interface PeerUrls {
  direct: string;
  /** The same database, through the delaying proxy in --rtt mode. */
  worker: string;
}

/** One system in one configuration, on its own fresh database. */
export interface Contender {
  /** Enqueues `count` jobs (untimed, direct). */
  enqueue(count: number): Promise<void>;
  /** Starts `loops` concurrent loops taking jobs; they run until `stop`. `onQuery` sees our statements. */
  start(loops: number, onQuery?: (sql: string) => void): Promise<void>;
  /** Enqueues one job now, through the workers' own handle (the latency sample's start). */
  enqueueOne(n: number): Promise<void>;
  /** Jobs not yet completed in the database. */
  remaining(): Promise<number>;
  /** Receipts written (3 per job), to verify the drain. */
  receipts(): Promise<number>;
  stop(): Promise<void>;
}

/** A system in one of its configurations. */
export interface PeerConfiguration {
  key: string;
  system: PeerName;
  /** Short name in the tables ("default", "tuned", "worker", "tick loops"). */
  mode: string;
  /** What the configuration is, for the notes under the table. */
  description: string;
  /** Whether the idle latency is measured in it (a worker that waits for jobs). */
  latency: boolean;
  make(urls: PeerUrls): Promise<Contender>;
}

export const RECEIPTS = "create table bench_receipts (job text not null, step int not null, primary key (job, step))";
export const INSERT_RECEIPT = "insert into bench_receipts (job, step) values ($1, $2) on conflict do nothing";

let onThirdReceipt: () => void = () => {};

/** Called by every contender's job body as its third receipt is written (the drain's counter). */
export const thirdReceiptWritten = () => onThirdReceipt();

/** Sets what thirdReceiptWritten calls (the drain's counter), or clears it. */
export function countThirdReceipts(counter: (() => void) | null): void {
  onThirdReceipt = counter ?? (() => {});
}

/** The `n` a `select count(*)::int as n …` answers. */
export async function countOf(client: pg.Client, countSql: string): Promise<number> {
  const { rows } = await client.query(countSql);
  return rows[0].n;
}

/** The installed version of a peer's package (peer-packages.ts installs them before this is read). */
export function installedVersion(name: PeerPackage): string {
  const version = installedPeerVersion(name);
  if (version === null) throw new Error(`${name} is not installed: ensurePeerPackages() (peer-packages.ts) first`);
  return version;
}

/** Enqueues jobs 0 to count - 1 (untimed), four at a time, then analyzes: what every contender's enqueue does. */
export async function enqueueFour(
  client: pg.Client,
  count: number,
  add: (i: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) await add(next++);
    }),
  );
  await client.query("analyze");
}
