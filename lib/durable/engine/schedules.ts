// Workflow option `schedule` (docs/guide/schedules.md, "Schedules"): a tick starts the run of each due slot of a
// workflow's cron expression, with id `<name>@<slot ISO time>`. Slots are computed here, with
// croner, on the database clock that the tick reads with the schedule rows (one statement).
//
// A schedule's row holds its next slot. The first is the first slot after the schedule was first
// seen. When a tick finds it due, it starts the run of the latest slot at or before now (a slot
// missed by more than one period is skipped, not backfilled) and only then moves the row on to the
// first slot after now, conditional on the row being unchanged. Start is idempotent on the id, so
// a tick that dies between the two starts the same run again, and of racing ticks one moves the row.
import { Cron } from "croner";
import { InvalidInputError, RunStateConflictError } from "../errors";
import { MAX_NAME_LENGTH } from "../names";
import { advanceSchedule, type DurableDb, planSchedule, readSchedules, type ScheduleRecord } from "../store";
import type { AnyWorkflow } from "../types";

export interface ScheduleInfo {
  workflow: string;
  cron: string;
  timezone: string;
  /** The next slot the tick will start (null before a tick first saw the schedule). */
  nextSlot: Date | null;
  /** The last slot whose run a tick started, and that run's id (null before the first). */
  lastSlot: Date | null;
  lastRunId: string | null;
}

export interface Scheduler {
  /** Starts the run of every due slot (once, whoever else ticks); the ids started by this call. */
  startDue(): Promise<string[]>;
  /** Every registered schedule and its next slot. */
  list(): Promise<ScheduleInfo[]>;
}

/** The timezone of a schedule that names none. */
export const DEFAULT_SCHEDULE_TIMEZONE = "UTC";

/** `<name>@` + an ISO time ("2026-11-30T09:00:00.000Z"): the run id of a slot. */
const SLOT_ID_SUFFIX_LENGTH = 1 + "2026-11-30T09:00:00.000Z".length;

/** The run id of `workflow`'s slot at `slot`: `<name>@<slot ISO time>`. */
export const slotRunId = (workflow: string, slot: Date): string => `${workflow}@${slot.toISOString()}`;

/** A registered schedule, compiled once per instance. */
interface Plan {
  workflow: AnyWorkflow;
  cron: string;
  timezone: string;
  input: unknown;
  pattern: Cron;
}

/** What a scheduler is made from: the database, the registered workflows, and how to start a run. */
interface SchedulerDeps {
  db: DurableDb;
  workflows: ReadonlyMap<string, AnyWorkflow>;
  start: (workflow: AnyWorkflow, input: unknown, id: string) => Promise<unknown>;
  log: (message: string) => void;
}

export function createScheduler(deps: SchedulerDeps): Scheduler {
  const { db, log } = deps;
  const plans: Plan[] = [];
  for (const workflow of deps.workflows.values()) {
    if (workflow.schedule === undefined) continue;
    validateSchedule(workflow);
    const { cron, timezone = DEFAULT_SCHEDULE_TIMEZONE, input } = workflow.schedule;
    plans.push({ workflow, cron, timezone, input, pattern: compile(workflow.name, cron, timezone) });
  }
  const names = plans.map((plan) => plan.workflow.name);

  return {
    async startDue() {
      if (plans.length === 0) return [];
      const { now, schedules } = await readSchedules(db, names);
      const rows = new Map(schedules.map((row) => [row.workflow, row]));
      const started: string[] = [];
      for (const plan of plans) {
        try {
          const id = await startSlot(deps, plan, rows.get(plan.workflow.name), now);
          if (id !== null) started.push(id);
        } catch (error) {
          // The slot stays due: the next tick tries again. Other schedules go on.
          log(
            `the schedule of workflow "${plan.workflow.name}" could not start its due slot: ` +
              `${(error as Error)?.message ?? error}; the next tick tries again`,
          );
        }
      }
      return started;
    },

    async list() {
      if (plans.length === 0) return [];
      const { schedules } = await readSchedules(db, names);
      const rows = new Map(schedules.map((row) => [row.workflow, row]));
      return plans.map(({ workflow, cron, timezone }) => {
        const row = rows.get(workflow.name);
        // A row planned under another cron or timezone is re-planned by the next tick.
        const current = row !== undefined && row.cron === cron && row.timezone === timezone;
        return {
          workflow: workflow.name,
          cron,
          timezone,
          nextSlot: current ? row.nextSlot : null,
          lastSlot: row?.lastSlot ?? null,
          lastRunId: row?.lastRunId ?? null,
        };
      });
    },
  };
}

/** Plans `plan`'s row, or starts its due slot and moves the row on; the id this call started, if any. */
async function startSlot(
  deps: SchedulerDeps,
  plan: Plan,
  row: ScheduleRecord | undefined,
  now: Date,
): Promise<string | null> {
  const { db, start, log } = deps;
  const { workflow, cron, timezone, pattern } = plan;
  const next = pattern.nextRun(now);
  if (next === null) {
    log(`the schedule of workflow "${workflow.name}" ("${cron}", ${timezone}) has no slot after ${iso(now)}`);
    return null;
  }
  // First seen, or its cron or timezone changed: the next slot is the first one after now.
  if (!row || row.cron !== cron || row.timezone !== timezone) {
    await planSchedule(db, { workflow: workflow.name, cron, timezone, nextSlot: next });
    return null;
  }
  if (row.nextSlot.getTime() > now.getTime()) return null;
  // Due: the latest slot at or before now (croner's previous runs are strictly before a time).
  const latest = pattern.previousRuns(1, new Date(now.getTime() + 1))[0];
  const slot = latest && latest.getTime() > row.nextSlot.getTime() ? latest : row.nextSlot;
  const id = slotRunId(workflow.name, slot);
  let runId: string | null = id;
  try {
    await start(workflow, plan.input, id);
  } catch (error) {
    if (!skipsSlot(error)) throw error;
    // Starting again would be refused again: say so, and move on to the next slot.
    log(`workflow "${workflow.name}": the run of schedule slot ${iso(slot)} was not started: ${error.message}`);
    // A run with the slot's id exists (another input, another workflow): it is the slot's run.
    if (RunStateConflictError.is(error) && error.activeRunId === undefined) runId = id;
    else runId = null;
  }
  const moved = await advanceSchedule(db, {
    workflow: workflow.name,
    cron,
    timezone,
    from: row.nextSlot,
    nextSlot: next,
    lastSlot: runId === null ? null : slot,
    lastRunId: runId,
  });
  // Of racing ticks that all started it, the one that moved the row reports it.
  return moved && runId !== null ? id : null;
}

/**
 * Throws InvalidInputError when a workflow's `schedule` is not a valid cron, timezone and input.
 * The cron is five fields (minute hour day-of-month month day-of-week) or a nickname (`@daily`).
 */
export function validateSchedule(workflow: AnyWorkflow): void {
  const { schedule, name } = workflow;
  if (schedule === undefined) return;
  if (schedule === null || typeof schedule !== "object") {
    throw new InvalidInputError(`workflow "${name}": schedule is { cron, timezone?, input? }`);
  }
  if (name.length + SLOT_ID_SUFFIX_LENGTH > MAX_NAME_LENGTH) {
    throw new InvalidInputError(
      `workflow "${name.slice(0, 40)}…": a scheduled workflow's name is at most ` +
        `${MAX_NAME_LENGTH - SLOT_ID_SUFFIX_LENGTH} characters (its runs' ids are "<name>@<slot ISO time>")`,
    );
  }
  compile(name, schedule.cron, schedule.timezone ?? DEFAULT_SCHEDULE_TIMEZONE);
  const parsed = workflow.input.safeParse(schedule.input);
  if (!parsed.success) {
    throw new InvalidInputError(
      `workflow "${name}": schedule.input is not a valid input of the workflow` +
        (schedule.input === undefined ? " (give one: the scheduled runs start with it)" : ""),
      { issues: parsed.error.issues },
    );
  }
}

/** The cron expression `cron` in `timezone`, or InvalidInputError naming the workflow. */
function compile(name: string, cron: unknown, timezone: unknown): Cron {
  if (typeof timezone !== "string" || !isTimezone(timezone)) {
    throw new InvalidInputError(
      `workflow "${name}": schedule.timezone ${JSON.stringify(timezone)} is not an IANA timezone ` +
        `("UTC", "Europe/Berlin", "America/New_York")`,
    );
  }
  const rule = "five fields (minute hour day-of-month month day-of-week) or a nickname such as @daily";
  if (typeof cron !== "string" || cron.trim() === "") {
    throw new InvalidInputError(`workflow "${name}": schedule.cron is a cron expression: ${rule}`);
  }
  let pattern: Cron;
  try {
    pattern = new Cron(cron, { timezone, mode: "5-part" });
  } catch (error) {
    throw new InvalidInputError(
      `workflow "${name}": schedule.cron ${JSON.stringify(cron)} is not a cron expression of ${rule} ` +
        `(${(error as Error)?.message ?? error})`,
      { cause: error },
    );
  }
  if (pattern.nextRun(new Date()) === null) {
    throw new InvalidInputError(`workflow "${name}": schedule.cron ${JSON.stringify(cron)} never comes due`);
  }
  return pattern;
}

function isTimezone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/**
 * A start that would be refused at every tick: the input is refused, a singleton's key is held,
 * or a run already has the slot's id. Any other error (the database) leaves the slot due.
 */
function skipsSlot(error: unknown): error is Error {
  if (InvalidInputError.is(error)) return true;
  if (!RunStateConflictError.is(error)) return false;
  return error.activeRunId !== undefined || /already exists/.test(error.message);
}

const iso = (date: Date) => date.toISOString();
