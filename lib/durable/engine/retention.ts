// Retention (docs/guide/retention.md, "Retention"): what finished long ago is deleted, a bounded
// slice at the end of every tick, or as much as asked from a script (`durable.compact`). The
// statements live in store/compact.ts; this file validates the options and decides how much each
// call does.
import { type Duration, toBoundedMs } from "../duration";
import { InvalidInputError } from "../errors";
import { checkRange } from "./check-range";
import { type CompactedRows, type CompactRequest, compactRows, type DurableDb, dueForCompaction } from "../store";

export interface RetentionOptions {
  /** Step rows, signals and stream chunks of terminal runs finished longer ago than this. */
  steps?: Duration;
  /** Run rows of terminal runs finished longer ago than this ("never": keep them). */
  runs?: Duration | "never";
  /** Events older than this. */
  events?: Duration;
  /**
   * What one tick spends at most: `rows` of each kind (runs compacted, runs deleted, events;
   * 1–10,000, default 500) and about `budget` of time (default "250ms"; checked between
   * statements of at most 100 rows of each kind, fewer after a statement that took over half of it).
   */
  slice?: { rows?: number; budget?: Duration };
}

export interface CompactReport {
  runsCompacted: number;
  runsDeleted: number;
  eventsDeleted: number;
  /** Whether rows were left for the next slice (the limit or the time ran out). */
  more: boolean;
  /** Rows of steps, signals and stream chunks of the compacted runs (a deleted run's go with it, uncounted). */
  stepRowsDeleted: number;
}

export interface Compactor {
  /** A tick's bounded slice (rows and milliseconds); does nothing without retention. */
  slice(): Promise<CompactReport | null>;
  /** As much as `limit` rows of each kind, from a script. */
  compact(options?: { limit?: number }): Promise<CompactReport>;
}

/** The shortest age a retention duration takes: a run's timeline stays readable a while after it ends. */
export const MIN_RETENTION_MS = 60_000;
/** The longest (about 100 years): older cut-offs would leave the range of timestamptz. */
export const MAX_RETENTION_MS = 36_500 * 86_400_000;
export const DEFAULT_SLICE_ROWS = 500;
export const DEFAULT_SLICE_MS = 250;
/** Rows of each kind per statement of a tick's slice, and of `compact()`. */
const SLICE_BATCH = 100;
const COMPACT_BATCH = 1_000;
const DEFAULT_COMPACT_LIMIT = 1_000;
const MAX_COMPACT_LIMIT = 100_000;

type Kind = keyof CompactRequest["limits"];
const KINDS: readonly Kind[] = ["compact", "runs", "events"];

interface Policy {
  stepsMs: number | null;
  runsMs: number | null;
  eventsMs: number | null;
  sliceRows: number;
  sliceMs: number;
}

/**
 * The compactor of an instance: validates `retention` now (InvalidInputError), then `slice()` at
 * the end of each tick and `compact()` for `durable.compact`. `runs` shorter than `steps` is
 * allowed: the row then goes, with its steps, at `runs`, and `steps` never applies. A tick with
 * nothing due costs one cheap statement; one with work, that one plus one statement per batch.
 */
export function createCompactor(deps: {
  db: DurableDb;
  retention: RetentionOptions | undefined;
  log: (message: string) => void;
}): Compactor {
  const policy = parsePolicy(deps.retention);
  // Rows of each kind per statement of a slice: halved after a statement that took more than half
  // the slice's time (a run whose deletion cascades slowly), doubled back after a quick one.
  let sliceBatch = Math.min(SLICE_BATCH, policy?.sliceRows ?? SLICE_BATCH);

  return {
    async slice() {
      // Without retention a tick asks nothing more of the database.
      if (!policy) return null;
      const { sliceRows, sliceMs } = policy;
      return compactBatches(
        deps.db,
        policy,
        sliceRows,
        () => sliceBatch,
        performance.now() + sliceMs,
        (ms) => {
          if (ms > sliceMs / 2) sliceBatch = Math.max(1, Math.floor(sliceBatch / 2));
          else if (ms < sliceMs / 8) sliceBatch = Math.min(SLICE_BATCH, sliceRows, sliceBatch * 2);
        },
      );
    },
    async compact(options = {}) {
      const limit = checkRange("limit", options.limit ?? DEFAULT_COMPACT_LIMIT, 1, MAX_COMPACT_LIMIT);
      return compactBatches(deps.db, policy, limit, () => Math.min(COMPACT_BATCH, limit), Number.POSITIVE_INFINITY);
    },
  };
}

/**
 * Up to `rows` of each kind, `batch()` per statement, stopping at `deadline` (performance.now());
 * `took(ms)` hears how long each statement took. First one cheap statement asks what is due:
 * with nothing due, that is all it costs.
 */
async function compactBatches(
  db: DurableDb,
  policy: Policy | null,
  rows: number,
  batch: () => number,
  deadline: number,
  took: (ms: number) => void = () => {},
): Promise<CompactReport> {
  const report: CompactReport = { runsCompacted: 0, runsDeleted: 0, eventsDeleted: 0, stepRowsDeleted: 0, more: false };
  if (!policy) return report;
  const due = await dueForCompaction(db, policy);
  const left: Record<Kind, number> = {
    compact: due.compact ? rows : 0,
    runs: due.runs ? rows : 0,
    events: due.events ? rows : 0,
  };
  while (KINDS.some((kind) => left[kind] > 0)) {
    const size = batch();
    const limits = {
      compact: Math.min(left.compact, size),
      runs: Math.min(left.runs, size),
      events: Math.min(left.events, size),
    };
    const began = performance.now();
    const done = await compactRows(db, { ...policy, limits });
    took(performance.now() - began);
    add(report, done);
    const picked: Record<Kind, number> = {
      compact: done.compactPicked,
      runs: done.runsDeleted,
      events: done.eventsPicked,
    };
    // A kind that took less than asked has nothing more due now; one that took all may have more.
    for (const kind of KINDS) {
      left[kind] = picked[kind] < limits[kind] ? 0 : left[kind] - picked[kind];
    }
    const full = KINDS.filter((kind) => limits[kind] > 0 && picked[kind] === limits[kind]);
    if (full.length === 0) return report;
    if (full.every((kind) => left[kind] === 0) || performance.now() >= deadline) {
      report.more = true;
      return report;
    }
  }
  return report;
}

function add(report: CompactReport, done: CompactedRows): void {
  report.runsCompacted += done.runsCompacted;
  report.runsDeleted += done.runsDeleted;
  report.eventsDeleted += done.eventsDeleted;
  report.stepRowsDeleted += done.stepRowsDeleted;
}

/** The validated options; null when nothing is to be deleted (no option, or only `runs: "never"`). */
function parsePolicy(retention: RetentionOptions | undefined): Policy | null {
  if (retention === undefined) return null;
  if (typeof retention !== "object" || retention === null || Array.isArray(retention)) {
    throw new InvalidInputError("retention is an object { steps?, runs?, events?, slice? }");
  }
  for (const key of Object.keys(retention)) {
    if (!["steps", "runs", "events", "slice"].includes(key)) {
      throw new InvalidInputError(`retention has no option "${key}" (it takes steps, runs, events and slice)`);
    }
  }
  const age = (value: Duration | undefined, name: string): number | null => {
    if (value === undefined) return null;
    const ms = toBoundedMs(value, `retention.${name}`);
    if (ms < MIN_RETENTION_MS || ms > MAX_RETENTION_MS) {
      throw new InvalidInputError(`retention.${name} is from 1 minute to 36500 days, not ${JSON.stringify(value)}`);
    }
    return ms;
  };
  const slice = retention.slice ?? {};
  if (typeof slice !== "object" || slice === null) {
    throw new InvalidInputError("retention.slice is an object { rows?, budget? }");
  }
  const sliceRows = checkRange("retention.slice.rows", slice.rows ?? DEFAULT_SLICE_ROWS, 1, 10_000);
  const sliceMs = toBoundedMs(slice.budget ?? DEFAULT_SLICE_MS, "retention.slice.budget");
  if (sliceMs < 1 || sliceMs > 60_000) {
    throw new InvalidInputError('retention.slice.budget is from "1ms" to "60s"');
  }
  const runsMs = retention.runs === "never" ? null : age(retention.runs, "runs");
  let stepsMs = age(retention.steps, "steps");
  // `runs` no longer than `steps`: a run's row goes, with its steps, before `steps` would apply.
  if (stepsMs !== null && runsMs !== null && runsMs <= stepsMs) stepsMs = null;
  const policy: Policy = { stepsMs, runsMs, eventsMs: age(retention.events, "events"), sliceRows, sliceMs };
  return policy.stepsMs === null && policy.runsMs === null && policy.eventsMs === null ? null : policy;
}
