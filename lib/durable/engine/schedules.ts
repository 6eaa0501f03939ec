// Placeholder until the schedules land (issue 13): no schedules start yet.
import type { DurableDb } from "../store";
import type { AnyWorkflow } from "../types";

export interface ScheduleInfo {
  workflow: string;
  cron: string;
  timezone: string;
  nextSlot: Date | null;
  lastSlot: Date | null;
  lastRunId: string | null;
}

export interface Scheduler {
  startDue(): Promise<string[]>;
  list(): Promise<ScheduleInfo[]>;
}

export function createScheduler(_deps: {
  db: DurableDb;
  workflows: ReadonlyMap<string, AnyWorkflow>;
  start: (workflow: AnyWorkflow, input: unknown, id: string) => Promise<unknown>;
  log: (message: string) => void;
}): Scheduler {
  return { startDue: async () => [], list: async () => [] };
}
