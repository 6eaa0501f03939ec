import { sql } from "kysely";
import type { DurableDb } from "./tables";

/** A scheduled workflow's row in durable_schedules (0004). */
export interface ScheduleRecord {
  workflow: string;
  cron: string;
  timezone: string;
  /** The next slot a tick starts. */
  nextSlot: Date;
  /** The last slot whose run a tick started, and that run's id. */
  lastSlot: Date | null;
  lastRunId: string | null;
}

const date = (value: unknown): Date => new Date(value as string);

/**
 * The rows of `workflows` (any order; a workflow never seen has none) and the database clock, in
 * one statement: what a tick reads before it starts due slots.
 */
export async function readSchedules(
  db: DurableDb,
  workflows: readonly string[],
): Promise<{ now: Date; schedules: ScheduleRecord[] }> {
  const { rows } = await sql<{
    now: Date | string;
    workflow: string | null;
    cron: string;
    timezone: string;
    next_slot: Date | string;
    last_slot: Date | string | null;
    last_run_id: string | null;
  }>`
    select clock.now, s.workflow, s.cron, s.timezone, s.next_slot, s.last_slot, s.last_run_id
      from (select durable_now() as now) clock
      left join durable_schedules s
        on s.workflow in (select jsonb_array_elements_text(${JSON.stringify(workflows)}::jsonb))
     order by s.workflow`.execute(db);
  return {
    now: date(rows[0]!.now),
    schedules: rows
      .filter((row) => row.workflow !== null)
      .map((row) => ({
        workflow: row.workflow!,
        cron: row.cron,
        timezone: row.timezone,
        nextSlot: date(row.next_slot),
        lastSlot: row.last_slot === null ? null : date(row.last_slot),
        lastRunId: row.last_run_id,
      })),
  };
}

/**
 * Plans a schedule: inserts its row with `nextSlot`, or, when the row holds another cron or
 * timezone, replaces them and the next slot (the last slot and run are kept). A row that already
 * holds this cron and timezone is left as it is. True when this call wrote the row.
 */
export async function planSchedule(
  db: DurableDb,
  plan: { workflow: string; cron: string; timezone: string; nextSlot: Date },
): Promise<boolean> {
  const { rows } = await sql<{ workflow: string }>`
    insert into durable_schedules as s (workflow, cron, timezone, next_slot)
    values (${plan.workflow}, ${plan.cron}, ${plan.timezone}, ${plan.nextSlot.toISOString()}::timestamptz)
    on conflict (workflow) do update
       set cron = excluded.cron, timezone = excluded.timezone, next_slot = excluded.next_slot,
           updated_at = durable_now()
     where s.cron <> excluded.cron or s.timezone <> excluded.timezone
    returning s.workflow`.execute(db);
  return rows.length > 0;
}

/**
 * Moves a schedule on from the slot it was due at (`from`) to `nextSlot`, recording the slot whose
 * run was started (`lastSlot`, `lastRunId`; null keeps the recorded ones), only while the row is
 * still due at `from` under the same cron and timezone: of racing ticks, one moves it. True when
 * this call moved it.
 */
export async function advanceSchedule(
  db: DurableDb,
  move: {
    workflow: string;
    cron: string;
    timezone: string;
    from: Date;
    nextSlot: Date;
    lastSlot: Date | null;
    lastRunId: string | null;
  },
): Promise<boolean> {
  const lastSlot = move.lastSlot?.toISOString() ?? null;
  const { rows } = await sql<{ workflow: string }>`
    update durable_schedules
       set next_slot = ${move.nextSlot.toISOString()}::timestamptz,
           last_slot = coalesce(${lastSlot}::timestamptz, last_slot),
           last_run_id = coalesce(${move.lastRunId}::text, last_run_id),
           updated_at = durable_now()
     where workflow = ${move.workflow} and next_slot = ${move.from.toISOString()}::timestamptz
       and cron = ${move.cron} and timezone = ${move.timezone}
    returning workflow`.execute(db);
  return rows.length > 0;
}
