// `start()` and `startMany()`: new runs of a registered workflow, idempotent on their ids, and the
// status token each answer carries (docs/model.md).
import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { z } from "zod";
import { resolveSecret } from "../auth/secrets";
import { statusTokenFor } from "../auth/status-token";
import { toBoundedMs } from "../duration";
import { InvalidInputError, RunStateConflictError } from "../errors";
import { holdsEnvelope } from "../encryption/payload-codec";
import { findDebouncedRun, insertDebouncedRun, insertRun, insertRuns, readRunInput } from "../store";
import type { AnyWorkflow, Duration } from "../types";
import type { StartOptions, StartResult } from "./durable-api";
import { debounceOf } from "./flow-control";
import { assertOpen, type DurableInstance } from "./instance";
import { type PreparedRun, prepareRun } from "./prepare-run";
import { checkTags } from "./run/run-metadata";

/** Starts a run of `workflow` (on its newest version) with `input`, or answers the run that has the id. */
export async function startRun<W extends AnyWorkflow>(
  instance: DurableInstance,
  workflow: W,
  input: z.input<W["input"]>,
  options: StartOptions = {},
): Promise<StartResult> {
  assertOpen(instance);
  const prepared = prepare(instance, workflow, input, options.id ?? randomUUID(), options.deadline, options.priority);
  const ttlMs = options.ttl === undefined ? null : toBoundedMs(options.ttl, "ttl");
  prepared.tags = checkTags(options.tags);
  const plainJson = prepared.inputJson;
  // Sealed under the run's id (engine/payloads.ts); refused when stored plain and holding the prefix.
  const run = { ...prepared, ttlMs, inputJson: await instance.codec.sealJson(prepared.id, plainJson) };
  const debounce = debounceOf(instance.workflows.get(run.workflow)!);
  if (debounce) return startDebounced(instance, run, debounce, plainJson);
  const row = await insertRun(instance.db, run);
  if (row.activeRunId !== undefined) throw singletonHeld(run, row.activeRunId);
  if (row.workflow !== run.workflow) {
    throw new RunStateConflictError(`run "${run.id}" already exists under workflow "${row.workflow}"`);
  }
  if (!row.sameInput && !(await sameStoredInput(instance, run.id, plainJson))) {
    throw new RunStateConflictError(`run "${run.id}" already exists with another input; start it under a new id`);
  }
  return startResult(instance, run.id, row.created);
}

/** A start of a debounced workflow (docs/guide/flow-control.md, "Debounce"). */
async function startDebounced(
  instance: DurableInstance,
  run: PreparedRun & { ttlMs: number | null },
  debounce: NonNullable<ReturnType<typeof debounceOf>>,
  plainJson: string,
): Promise<StartResult> {
  // The key's pending run takes this input: sealed under that run's id, which it is stored in.
  const pendingId =
    instance.codec.seals && run.debounceKey != null
      ? await findDebouncedRun(instance.db, run.workflow, run.debounceKey)
      : null;
  const replacement =
    pendingId !== null && pendingId !== run.id
      ? { id: pendingId, inputJson: await instance.codec.sealJson(pendingId, plainJson) }
      : undefined;
  const row = await insertDebouncedRun(instance.db, run, debounce, replacement);
  if (row.workflow !== run.workflow) {
    throw new RunStateConflictError(`run "${run.id}" already exists under workflow "${row.workflow}"`);
  }
  if (!row.sameInput && !(await sameStoredInput(instance, run.id, plainJson))) {
    throw new RunStateConflictError(`run "${run.id}" already exists with another input; start it under a new id`);
  }
  const result = startResult(instance, row.id, row.created);
  return row.debounced ? Object.defineProperties(result, { debounced: { value: true, enumerable: true } }) : result;
}

/**
 * Starts one run per input in one statement, each idempotent on its id (`ids[i]`, default a new
 * uuid): a `StartResult` for each, in order. Every input is checked before anything is written;
 * an id that names a run of another workflow or input, or a singleton key held by another run,
 * throws `RunStateConflictError` after the others were started (a repeat of the call answers them).
 */
export async function startManyRuns<W extends AnyWorkflow>(
  instance: DurableInstance,
  workflow: W,
  inputs: readonly z.input<W["input"]>[],
  options: { ids?: readonly string[]; deadline?: Duration; ttl?: Duration; tags?: readonly string[] } = {},
): Promise<StartResult[]> {
  assertOpen(instance);
  if (!Array.isArray(inputs)) throw new InvalidInputError("startMany takes an array of inputs");
  if (options.ids !== undefined && (!Array.isArray(options.ids) || options.ids.length !== inputs.length)) {
    throw new InvalidInputError(`startMany: ids has ${options.ids?.length} entries for ${inputs.length} inputs`);
  }
  if (inputs.length > 1000) throw new InvalidInputError("startMany starts at most 1,000 runs per call");
  if (workflow?.debounce) {
    throw new InvalidInputError(`workflow "${workflow.name}" debounces: start its runs one at a time with start()`);
  }
  const prepared = inputs.map((input, n) =>
    prepare(instance, workflow, input, options.ids?.[n] ?? randomUUID(), options.deadline),
  );
  const runs = await Promise.all(
    prepared.map(async (run) => ({ ...run, inputJson: await instance.codec.sealJson(run.id, run.inputJson) })),
  );
  if (new Set(runs.map((run) => run.id)).size !== runs.length) {
    throw new InvalidInputError("startMany: two inputs have the same id");
  }
  if (runs.length === 0) return [];
  const deadlines = new Set(runs.map((run) => run.deadlineInMs));
  const ttlMs = options.ttl === undefined ? null : toBoundedMs(options.ttl, "ttl");
  const tags = checkTags(options.tags);
  const answered = await insertRuns(instance.db, runs, { deadlineInMs: [...deadlines][0] ?? null, ttlMs, tags });
  const conflict = await findConflict(instance, answered, prepared);
  if (conflict) {
    throw new RunStateConflictError(
      conflict.workflow === null
        ? `run "${conflict.id}" was not started: another run of workflow "${runs[0]!.workflow}" holds its singleton key`
        : `run "${conflict.id}" already exists with another workflow or input; start it under a new id`,
    );
  }
  return answered.map((row) => startResult(instance, row.id, row.created));
}

/** The first answer of startMany that names a run of another workflow or input, if any. */
async function findConflict(
  instance: DurableInstance,
  answered: Awaited<ReturnType<typeof insertRuns>>,
  prepared: PreparedRun[],
): Promise<Awaited<ReturnType<typeof insertRuns>>[number] | undefined> {
  const workflow = prepared[0]!.workflow;
  for (const [n, row] of answered.entries()) {
    if (row.created) continue;
    if (row.workflow !== workflow) return row;
    if (!row.sameInput && !(await sameStoredInput(instance, row.id, prepared[n]!.inputJson))) return row;
  }
  return undefined;
}

/**
 * Whether run `id` was started with this input, when the stored one is not the same jsonb: sealed
 * under another key (a rotation), or with its keys in another order, it is opened and compared.
 */
async function sameStoredInput(instance: DurableInstance, id: string, plainJson: string): Promise<boolean> {
  const stored = await readRunInput(instance.db, id);
  if (stored === undefined || !holdsEnvelope(stored)) return false;
  return isDeepStrictEqual(await instance.codec.open(stored), JSON.parse(plainJson));
}

function prepare(
  instance: DurableInstance,
  workflow: AnyWorkflow,
  input: unknown,
  id: string,
  deadline?: Duration,
  priority?: number,
) {
  return prepareRun(instance.registry, instance.settings.maxResultBytes, workflow, input, id, deadline, priority);
}

function singletonHeld(run: PreparedRun, activeRunId: string): RunStateConflictError {
  return new RunStateConflictError(
    `workflow "${run.workflow}" already has an active run for singleton key "${run.singletonKey}": ` +
      `"${activeRunId}"; start another when it has finished`,
    { activeRunId },
  );
}

// The token is derived when read, so a caller that never reads it (a script, a test) never
// needs DURABLE_SECRET, nor hears that it is unset.
function startResult(instance: DurableInstance, id: string, created: boolean): StartResult {
  return {
    id,
    created,
    get statusToken() {
      return statusTokenOf(instance, id);
    },
  };
}

/** The bearer token of a run's status route, derived from DURABLE_SECRET (auth/status-token.ts). */
export function statusTokenOf(instance: DurableInstance, id: string): string {
  return statusTokenFor(resolveSecret("durable", instance.secrets?.durable, instance.log), id);
}
