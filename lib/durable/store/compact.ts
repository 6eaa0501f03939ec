import { type RawBuilder, sql } from "kysely";
import type { DurableDb } from "./tables";

/** What one compaction statement may delete: the ages (null: keep that kind) and a limit per kind. */
export interface CompactRequest {
  /** Step rows, signals and stream chunks of terminal runs finished longer ago than this. */
  stepsMs: number | null;
  /** Rows of terminal runs finished longer ago than this (with everything of theirs). */
  runsMs: number | null;
  /** Events created longer ago than this, except those of a run that is not terminal. */
  eventsMs: number | null;
  /** At most this many runs compacted, runs deleted, and events deleted by age (0: none). */
  limits: { compact: number; runs: number; events: number };
}

export interface CompactedRows {
  runsCompacted: number;
  /**
   * Rows of durable_steps, durable_signals (those without a delivery id: the others keep the id and
   * lose their payload) and durable_stream_chunks of the compacted runs.
   */
  stepRowsDeleted: number;
  runsDeleted: number;
  /** Events deleted by age, plus the events of the deleted runs. */
  eventsDeleted: number;
  /** Runs picked for compaction (some may be deleted instead): `limits.compact` when more may be due. */
  compactPicked: number;
  /** Events picked by age: `limits.events` when more may be due. */
  eventsPicked: number;
}

export type DueKinds = Record<keyof CompactRequest["limits"], boolean>;

const TERMINAL = sql.raw("('completed', 'failed', 'cancelled')");
const LIVE = sql.raw("('pending', 'running', 'waiting')");

/** A whole number >= 0, checked before it is written into a statement as a literal. */
function whole(n: number): RawBuilder<unknown> {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a whole number: ${n}`);
  return sql.lit(n);
}

// The cut-offs read durable_now() in place, not once in a CTE: the planner then estimates the
// ranges from the column statistics, and takes durable_runs_to_compact for the compaction pick
// (with a cut-off it cannot estimate it may take durable_runs_finished, which would walk past every
// run compacted already). Ages and limits are validated whole numbers, written as literals.
const before = (ms: number) => sql`durable_now() - ${whole(ms)} * interval '1 millisecond'`;

const compactable = (stepsMs: number) =>
  sql`status in ${TERMINAL} and compacted_at is null and finished_at < ${before(stepsMs)}`;
const deletable = (runsMs: number) => sql`status in ${TERMINAL} and finished_at < ${before(runsMs)}`;
// A primary-key lookup per event: the old events of a run still going are passed over, never deleted.
const expired = (eventsMs: number) =>
  sql`e.created_at < ${before(eventsMs)}
      and not coalesce((select r.status in ${LIVE} from durable_runs r where r.id = e.run_id), false)`;

/**
 * Whether anything of each kind is due (one cheap statement: three index probes). What a tick asks
 * first, so that a tick with nothing due adds this one round trip and no more.
 */
export async function dueForCompaction(db: DurableDb, request: Omit<CompactRequest, "limits">): Promise<DueKinds> {
  const probe = (ms: number | null, query: (ms: number) => RawBuilder<unknown>) =>
    ms === null ? sql`false` : sql`exists (${query(ms)})`;
  const compact = probe(request.stepsMs, (ms) => sql`select 1 from durable_runs where ${compactable(ms)}`);
  const runs = probe(request.runsMs, (ms) => sql`select 1 from durable_runs where ${deletable(ms)}`);
  const events = probe(request.eventsMs, (ms) => sql`select 1 from durable_events e where ${expired(ms)}`);
  const { rows } = await sql<DueKinds>`select ${compact} as compact, ${runs} as runs, ${events} as events`.execute(db);
  return rows[0]!;
}

/**
 * One bounded slice of retention, in one statement (one round trip, one transaction), on the
 * database clock; a kind whose age is null or whose limit is 0 is left out of it:
 *
 * - run deletion: up to `limits.runs` terminal runs finished before now − runs, oldest first,
 *   through `durable_runs_finished`, locked `for update skip locked` (a run a retry or another
 *   compactor holds is left for later), deleted (their steps, signals and chunks by the foreign
 *   keys' cascade) with their events.
 * - compaction: up to `limits.compact` terminal runs, oldest first, with `compacted_at` null and
 *   `finished_at` before now − steps (and not before now − runs: those are deleted instead),
 *   through `durable_runs_to_compact`, locked likewise; they lose their step rows, signals and
 *   stream chunks and get `compacted_at`. The row stays: status, output, error, start dedup, and
 *   each delivery id (its signal row, payload emptied), so a repeated delivery is still a repeat.
 * - events: up to `limits.events` events created before now − events, through
 *   `durable_events_created`, except those of a run that is not terminal, locked `skip locked`.
 *
 * The status test in every pick (re-checked on the locked row version under READ COMMITTED) is what
 * keeps a run that is not terminal out of all three. Should both picks take a run (their cut-offs
 * read the clock microseconds apart), it is deleted, not compacted (`kept` waits for the deletion's
 * ids and leaves them out). An event picked by age that belongs to a
 * deleted run is deleted once (a second delete of a row by the same statement is a no-op). Every
 * lock is taken `skip locked`, so two compactors never wait for each other (an event another one
 * holds is deleted by that one); the cascade and the update touch only runs this statement locked.
 */
export async function compactRows(db: DurableDb, request: CompactRequest): Promise<CompactedRows> {
  const { rows } = await compactStatement(request).execute(db);
  const row = rows[0]!;
  return {
    runsCompacted: Number(row.runsCompacted),
    stepRowsDeleted: Number(row.stepRowsDeleted),
    runsDeleted: Number(row.runsDeleted),
    eventsDeleted: Number(row.eventsDeleted),
    compactPicked: Number(row.compactPicked),
    eventsPicked: Number(row.eventsPicked),
  };
}

/** The statement of `compactRows`, unexecuted (the bench compiles it to EXPLAIN it). */
export function compactStatement(request: CompactRequest): RawBuilder<CompactedRows> {
  const { limits } = request;
  const ctes: RawBuilder<unknown>[] = [];
  const zero = sql`0`;
  let runsDeleted = zero;
  let runEvents = zero;
  let compacted = zero;
  let stepRows = zero;
  let compactPicked = zero;
  let byAge = zero;
  let eventsPicked = zero;
  const deleting = request.runsMs !== null && limits.runs > 0;
  if (request.runsMs !== null && limits.runs > 0) {
    ctes.push(
      sql`due_delete as (
        select id from durable_runs where ${deletable(request.runsMs)}
         order by finished_at limit ${whole(limits.runs)}
         for update skip locked)`,
      sql`runs_gone as (delete from durable_runs where id = any (array(select id from due_delete)) returning id)`,
      sql`run_events as (
        select id from durable_events where run_id = any (array(select id from runs_gone)) for update skip locked)`,
      sql`run_events_gone as (
        delete from durable_events where id = any (array(select id from run_events)) returning 1)`,
    );
    runsDeleted = sql`(select count(*) from runs_gone)`;
    runEvents = sql`(select count(*) from run_events_gone)`;
  }
  if (request.stepsMs !== null && limits.compact > 0) {
    // Runs due for deletion are deleted, not compacted first: the pick stops at now − runs.
    const notDeletable = request.runsMs === null ? sql`` : sql`and finished_at >= ${before(request.runsMs)}`;
    ctes.push(
      sql`due_compact as (
        select id from durable_runs where ${compactable(request.stepsMs)} ${notDeletable}
         order by finished_at limit ${whole(limits.compact)}
         for update skip locked)`,
      deleting
        ? sql`kept as (select id from due_compact where not (id = any (array(select id from runs_gone))))`
        : sql`kept as (select id from due_compact)`,
      sql`steps_gone as (delete from durable_steps where run_id = any (array(select id from kept)) returning 1)`,
      // A delivery id stays as long as the run row, its payload goes: a webhook sender retrying
      // for days must still hear "repeat", not 409 (docs/rules.md, rule 16). Deliveries without one
      // have nothing to dedup and go whole.
      sql`signals_gone as (
        delete from durable_signals where run_id = any (array(select id from kept)) and delivery_id is null
        returning 1)`,
      sql`payloads_gone as (
        update durable_signals set payload = 'null', payload_bytes = 0
         where run_id = any (array(select id from kept)) and delivery_id is not null)`,
      sql`chunks_gone as (
        delete from durable_stream_chunks where run_id = any (array(select id from kept)) returning 1)`,
      // A callback keeps its row (a late POST still hears 409, a repeat of its key a repeat), not its payload.
      sql`callback_payloads_gone as (
        update durable_callbacks set payload = null, payload_bytes = 0, schema = null
         where run_id = any (array(select id from kept)))`,
      sql`compacted as (
        update durable_runs set compacted_at = durable_now() where id = any (array(select id from kept)) returning 1)`,
    );
    compacted = sql`(select count(*) from compacted)`;
    stepRows = sql`(select count(*) from steps_gone) + (select count(*) from signals_gone)
                   + (select count(*) from chunks_gone)`;
    compactPicked = sql`(select count(*) from due_compact)`;
  }
  if (request.eventsMs !== null && limits.events > 0) {
    ctes.push(
      sql`due_events as (
        select e.id from durable_events e where ${expired(request.eventsMs)}
         order by e.created_at limit ${whole(limits.events)}
         for update of e skip locked)`,
      sql`events_gone as (delete from durable_events where id = any (array(select id from due_events)) returning 1)`,
    );
    byAge = sql`(select count(*) from events_gone)`;
    eventsPicked = sql`(select count(*) from due_events)`;
  }
  const counts = sql`
    select ${compacted}::integer as "runsCompacted", (${stepRows})::integer as "stepRowsDeleted",
           ${runsDeleted}::integer as "runsDeleted", (${byAge} + ${runEvents})::integer as "eventsDeleted",
           ${compactPicked}::integer as "compactPicked", ${eventsPicked}::integer as "eventsPicked"`;
  return ctes.length === 0 ? sql<CompactedRows>`${counts}` : sql<CompactedRows>`with ${sql.join(ctes)} ${counts}`;
}
