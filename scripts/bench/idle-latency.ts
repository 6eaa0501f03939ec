// Where the worker's idle latency goes (docs/performance.md, "Peers", "Where the idle latency
// goes"): `npx tsx scripts/bench/idle-latency.ts [--samples N]` starts one run of 3 `run` steps at a
// time on an idle worker (`work({ concurrency: 1 })`, woken by NOTIFY), as the peers section's
// latency does, and timestamps each part from outside the engine: `start`'s statement at the
// driver (connect's `onQuery`, called at each send), the `durable_due` notification on a listening
// connection of the bench's own, each statement the worker sends, and the completion's commit
// (the bench's trigger notifies `bench_done`). It prints the p50 and mean of each gap, and what the
// worker sent besides the run's own statements; `--raw` prints the first samples' timelines.
import pg from "pg";
import { connect, createDurable } from "../../lib/durable";
import { dropCreatedDatabases, freshServerDatabase } from "./databases";
import { peerRun, quiet } from "./peer-durable";
import { ms, percentile, table } from "./report";
import { statementKind } from "./throughput";

interface Sent {
  kind: string;
  sql: string;
  at: number;
}

interface Sample {
  /** Before `start` is called. */
  t0: number;
  startReturned: number;
  due: number;
  done: number;
  /** The worker's statements from the start's return to the completion seen. */
  sent: Sent[];
}

const RUN_STATEMENTS = ["durable_claim_run", "durable_record_step", "durable_finish_run", "durable_finish_and_claim"];

/** A listening connection that timestamps the notifications of `channels`. */
async function listener(url: string, channels: string[], seen: (channel: string, at: number) => void) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  for (const channel of channels) await client.query(`listen ${channel}`);
  client.on("notification", (n) => seen(n.channel, performance.now()));
  return client;
}

async function setUp(url: string) {
  const admin = createDurable({
    db: await connect(url, { driver: "pg", poolSize: 2 }),
    workflows: [peerRun],
    ...quiet,
  });
  await admin.migrate();
  await admin.close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    `create function bench_done() returns trigger language plpgsql as $$
       begin perform pg_notify('bench_done', new.id); return null; end $$;
     create trigger bench_done after update of status on durable_runs
       for each row when (new.status = 'completed') execute function bench_done();`,
  );
  await client.end();
}

/** `samples` runs started one at a time on an idle worker, each with its timestamps. */
async function measure(samples: number): Promise<Sample[]> {
  const url = await freshServerDatabase("idle_latency");
  await setUp(url);
  let sent: Sent[] = [];
  const onQuery = (sql: string) => sent.push({ kind: statementKind(sql), sql, at: performance.now() });
  const durable = createDurable({
    db: await connect(url, { driver: "pg", poolSize: 3, onQuery }),
    workflows: [peerRun],
    ...quiet,
  });
  let marks: Record<string, number> = {};
  let done: (() => void) | null = null;
  const notes = await listener(url, ["durable_due", "bench_done"], (channel, at) => {
    marks[channel] ??= at;
    if (channel === "bench_done") done?.();
  });
  const stop = new AbortController();
  const working = durable.work({ concurrency: 1, signal: stop.signal });
  await new Promise((r) => setTimeout(r, 300)); // the worker reaches its idle wait
  const result: Sample[] = [];
  try {
    for (let i = -3; i < samples; i++) {
      const completed = new Promise<void>((resolve) => {
        done = resolve;
      });
      marks = {};
      sent = [];
      const t0 = performance.now();
      await durable.start(peerRun, { n: i }, { id: `idle-${i}` });
      const startReturned = performance.now();
      await completed;
      const sample = { t0, startReturned, due: marks.durable_due!, done: marks.bench_done!, sent };
      if (i >= 0) result.push(sample);
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 30));
    }
  } finally {
    stop.abort();
    await working;
    await durable.close();
    await notes.end();
  }
  return result;
}

/** The gaps of one sample, in order, named. */
function gaps(s: Sample): [string, number][] {
  const insert = s.sent[0]!;
  const own = s.sent.filter((q) => RUN_STATEMENTS.includes(q.kind) && q.at < s.done);
  const claim = own.find((q) => q.kind === "durable_claim_run");
  const ends = own.filter((q) => q.kind.startsWith("durable_finish"));
  const receipts = own.filter((q) => q.kind === "durable_record_step");
  if (!claim || ends.length === 0 || receipts.length < 2)
    throw new Error(`unexpected statements: ${own.map((q) => q.kind)}`);
  const end = ends[ends.length - 1]!;
  return [
    ["start() called → its insert sent (JavaScript)", insert.at - s.t0],
    ["insert sent → durable_due seen (round trip, commit, NOTIFY)", s.due - insert.at],
    ["durable_due seen → claim sent (the worker's wake)", claim.at - s.due],
    ["claim sent → 1st receipt sent (claim round trip, step 1)", receipts[0]!.at - claim.at],
    ["1st receipt sent → 2nd receipt sent (step 2)", receipts[1]!.at - receipts[0]!.at],
    ["2nd receipt sent → completion sent (step 3)", end.at - receipts[1]!.at],
    ["completion sent → bench_done seen (its commit and NOTIFY)", s.done - end.at],
    ["total: start() called → bench_done seen", s.done - s.t0],
    ["(start() returned at the caller, after durable_due seen)", s.startReturned - s.due],
  ];
}

/** Statements sent during a sample (until the next one's start) besides start and the run's own four. */
function others(samples: Sample[]): string[][] {
  const counts = new Map<string, { n: number; sql: string }>();
  for (const s of samples) {
    for (const q of s.sent.slice(1)) {
      if (RUN_STATEMENTS.includes(q.kind) && q.at < s.done) continue;
      const entry = counts.get(q.kind) ?? { n: 0, sql: q.sql.replace(/\s+/g, " ").trim().slice(0, 70) };
      entry.n++;
      counts.set(q.kind, entry);
    }
  }
  return [...counts].map(([kind, { n, sql }]) => [kind, (n / samples.length).toFixed(2), sql]);
}

const samplesArg = process.argv.indexOf("--samples");
const count = samplesArg > 0 ? Number(process.argv[samplesArg + 1]) : 100;
try {
  const samples = await measure(count);
  const rows = gaps(samples[0]!).map(([name], i) => {
    const values = samples.map((s) => gaps(s)[i]![1]);
    return [name, ms(percentile(values, 50)), ms(values.reduce((a, b) => a + b, 0) / values.length)];
  });
  console.log(`\nIdle worker, one run of 3 \`run\` steps at a time, ${count} samples:\n`);
  table([["part", "p50", "mean"], ...rows]);
  const extra = others(samples);
  console.log(
    "\nWhat the worker sent besides the run's own statements (after its completion, until the next start):\n",
  );
  table([["statement", "per sample", "one of them"], ...extra]);
  // --raw: the first 10 samples' timelines, in ms from the durable_due notification.
  if (process.argv.includes("--raw")) {
    for (const s of samples.slice(0, 10)) {
      const at = (t: number) => (t - s.due).toFixed(2);
      const sends = s.sent.map((q) => `${q.kind}@${at(q.at)}`).join(" ");
      console.log(`start ${at(s.t0)}..${at(s.startReturned)} done ${at(s.done)}: ${sends}`);
    }
  }
} finally {
  await dropCreatedDatabases();
}
