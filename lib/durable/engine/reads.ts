// The read commands: status, inspect, list, events, readStream, countDue, schedules. Each reads
// one statement's answer; `status` and `inspect` heal a run whose lease ran out as they read it
// (store/read-run.ts).
import { DecryptionError, InvalidInputError, RunStateConflictError } from "../errors";
import { isStorableName } from "../names";
import type { RunLedger, RunStatus, RunStatusValue } from "../schemas";
import {
  checkCursor,
  countDueRuns,
  listRuns,
  type RunEvent,
  readEvents,
  readRun,
  readStream,
  type StreamChunk,
} from "../store";
import type { AnyWorkflow } from "../types";
import { checkRange } from "./check-range";
import type { ListOptions, ListPage } from "./durable-api";
import { assertOpen, type DurableInstance, isRegistered } from "./instance";
import { openEvents, openRunAndSteps } from "./payloads";
import { checkRunFilter } from "./run-filter";
import { toRunLedger } from "./run-ledger";
import { toRunStatus, toRunSummary } from "./run-status";
import type { ScheduleInfo } from "./schedules";

/**
 * `status(id)`: null when there is no such run; a run of another workflow than `options.workflow`
 * is a conflict. With `ledger: true`, the run's input and its receipts' results too (engine/run-ledger.ts).
 */
export async function readStatus(
  instance: DurableInstance,
  id: string,
  options: { workflow?: AnyWorkflow; ledger?: boolean } = {},
): Promise<RunStatus | RunLedger | null> {
  if (options === null || typeof options !== "object") throw new InvalidInputError("status: options is an object");
  if (options.ledger !== undefined && typeof options.ledger !== "boolean") {
    throw new InvalidInputError("status: ledger is true or false");
  }
  const read = await readOpened(instance, id);
  if (!read) return null;
  const status = toRunStatus(read.run, read.steps, isRegistered(instance, read.run));
  if (options.workflow) expectWorkflow(id, status.workflow, options.workflow);
  return options.ledger ? toRunLedger(instance, status, read.run, read.steps) : status;
}

/** `inspect(id)`: the status, and whether a claim would take the run now by the database clock. */
export async function inspectRun(
  instance: DurableInstance,
  id: string,
): Promise<{ status: RunStatus; due: boolean } | null> {
  const read = await readOpened(instance, id);
  if (!read) return null;
  return { status: toRunStatus(read.run, read.steps, isRegistered(instance, read.run)), due: read.due };
}

/** A run and its steps read (healing a run whose lease ran out) and opened; null when there is none. */
async function readOpened(instance: DurableInstance, id: string) {
  assertOpen(instance);
  if (!isStorableName(id)) return null;
  const sealed = await readRun(instance.db, id);
  if (!sealed) return null;
  // Opened for the reader (engine/payloads.ts): a key this deployment lacks throws DecryptionError.
  return openRunAndSteps(instance.codec, sealed);
}

/** `list()`: a page of runs, newest first, filtered (engine/run-filter.ts). */
export async function listRunPage(instance: DurableInstance, options: ListOptions = {}): Promise<ListPage> {
  assertOpen(instance);
  const query = checkRunFilter(options, "list", ["limit", "cursor"]);
  const limit = checkRange("limit", options.limit ?? 50, 1, 200);
  if (options.cursor !== undefined) {
    if (typeof options.cursor !== "string") throw new InvalidInputError("cursor is not one this API returned");
    checkCursor(options.cursor);
  }
  const page = await listRuns(instance.db, { ...query, limit, cursor: options.cursor });
  return {
    runs: await Promise.all(
      // A summary shows the error's message of a run's payloads, nothing else: only that is opened.
      // One run sealed under a key this deployment lacks does not hide the page: its row says so in
      // place of the message (its code and name are plain), and status() throws for it alone.
      page.runs.map(async (run) => {
        const error = await instance.codec.open(run.error).catch((cause: unknown) => {
          if (!DecryptionError.is(cause)) throw cause;
          return { ...run.error!, message: cause.message };
        });
        return toRunSummary(error === run.error ? run : { ...run, error }, isRegistered(instance, run));
      }),
    ),
    nextCursor: page.nextCursor,
  };
}

/** `events(runId)`: the run's events after event id `after`, oldest first. */
export async function listEvents(
  instance: DurableInstance,
  runId: string,
  options: { after?: number; limit?: number } = {},
): Promise<RunEvent[]> {
  assertOpen(instance);
  const { after = 0, limit = 200 } = options;
  checkRange("after", after, 0, undefined, "whole number");
  checkRange("limit", limit, 1, 1000);
  if (!isStorableName(runId)) return [];
  return openEvents(instance.codec, await readEvents(instance.db, runId, after, limit));
}

/** `readStream(id)`: the run's stream chunks after seq `after`, and its status; null for no such run. */
export async function readRunStream(
  instance: DurableInstance,
  id: string,
  options: { after?: number; limit?: number } = {},
): Promise<{ status: RunStatusValue; chunks: StreamChunk[] } | null> {
  assertOpen(instance);
  const { after = 0, limit = 500 } = options;
  checkRange("after", after, 0, undefined, "whole number");
  checkRange("limit", limit, 1, 1000);
  if (!isStorableName(id)) return null;
  const read = await readStream(instance.db, id, after, limit);
  if (read.status === null) return null;
  // Each chunk was sealed on its own (engine/run/run-streams.ts): open returns the page itself when none was.
  return { status: read.status as RunStatusValue, chunks: await instance.codec.open(read.chunks) };
}

/** `countDue()`: how many runs a claim would take now, counted up to `max`. */
export async function countDue(instance: DurableInstance, options: { max?: number } = {}): Promise<number> {
  assertOpen(instance);
  const max = checkRange("max", options.max ?? 1000, 1, 100_000);
  return countDueRuns(instance.db, instance.names, instance.registry.versions, max);
}

/** `schedules()`: the registered schedules and their next slots. */
export function listSchedules(instance: DurableInstance): Promise<ScheduleInfo[]> {
  assertOpen(instance);
  return instance.scheduler.list();
}

/** A typed call named a workflow: the run must belong to it. */
export function expectWorkflow(runId: string, stored: string, named: AnyWorkflow): void {
  if (stored !== named.name) {
    throw new RunStateConflictError(`run "${runId}" belongs to workflow "${stored}", not "${named.name}"`);
  }
}
