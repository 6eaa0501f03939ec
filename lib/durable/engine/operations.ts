// The operator's commands over many runs and from a step (docs/guide/runs.md, "Acting on many
// runs", "Forking a run"): cancelMany and retryMany walk the runs a filter matches in bounded
// batches, each run changed by the single-run functions' rules under its own fence; fork copies a
// run's receipts before a step into a new run.
import { randomUUID } from "node:crypto";
import { toBoundedMs } from "../duration";
import { InvalidInputError, RunNotFoundError, RunStateConflictError } from "../errors";
import { isStorableName, storableName } from "../names";
import { type BulkBatch, cancelRunsBatch, findRunWorkflow, forkRun, type RunPosition, retryRunsBatch } from "../store";
import { hasUnstorableText } from "../text";
import { versionKey } from "./define-workflow";
import type { BulkOptions, BulkResult, ForkOptions, RunFilterOptions, StartResult } from "./durable-api";
import { assertOpen, type DurableInstance, isRegistered } from "./instance";
import { sealForkEdit } from "./fork-edits";
import { checkBulkFilter } from "./run-filter";
import { statusTokenOf } from "./start";

/** The options `fork` takes. */
const FORK_OPTIONS = new Set(["fromStep", "id", "overrides", "reason"]);

/** Runs per statement of cancelMany and retryMany: each batch is one transaction holding its runs' locks. */
export const BULK_BATCH = 500;

/** The scope a cancelMany reason is sealed under (engine/payloads.ts). */
const CANCEL_MANY_SCOPE = "cancelMany";

/** `cancelMany(filter, options)`: cancels every run the filter matches that is not terminal. */
export async function cancelManyRuns(
  instance: DurableInstance,
  filter: RunFilterOptions,
  options: BulkOptions = {},
): Promise<BulkResult> {
  assertOpen(instance);
  const query = checkBulkFilter(filter, "cancelMany");
  if (options === null || typeof options !== "object") throw new InvalidInputError("cancelMany: options is an object");
  const { reason, children = "cancel" } = options;
  if (children !== "cancel" && children !== "keep") {
    throw new InvalidInputError('cancelMany: children is "cancel" or "keep"');
  }
  if (reason !== undefined && (typeof reason !== "string" || hasUnstorableText(reason) || reason.length > 1000)) {
    throw new InvalidInputError(
      "cancelMany: a reason is a string of at most 1000 characters, without NUL or a lone surrogate",
    );
  }
  // One reason for many runs: sealed once, under the scope "cancelMany" (an envelope names its
  // scope, so every run's reader opens it; reencrypt() moves it under each run's own).
  const stored = reason === undefined ? null : await instance.codec.sealText(CANCEL_MANY_SCOPE, reason);
  return walk((after) => cancelRunsBatch(instance.db, query, { after, limit: BULK_BATCH, reason: stored, children }));
}

/** `retryMany(filter)`: retries every failed run the filter matches. */
export async function retryManyRuns(instance: DurableInstance, filter: RunFilterOptions): Promise<BulkResult> {
  assertOpen(instance);
  const query = checkBulkFilter(filter, "retryMany");
  return walk((after) => retryRunsBatch(instance.db, query, { after, limit: BULK_BATCH }));
}

/**
 * Batches newest first, each taking the runs older than the last one picked: every run is
 * considered once per call, so runs that keep matching (a retried run that fails again, a run
 * started meanwhile) never keep the walk going. A batch that met a deadlock (a cancel's cascade
 * against an owner's end: docs/sql.md, "Lock order") rolled back whole and is sent again.
 */
async function walk(batch: (after: RunPosition | undefined) => Promise<BulkBatch>): Promise<BulkResult> {
  let after: RunPosition | undefined;
  let matched = 0;
  let changed = 0;
  for (;;) {
    const done = await withDeadlockRetry(() => batch(after));
    matched += done.matched;
    changed += done.changed;
    if (done.matched < BULK_BATCH || !done.last) return { matched, changed };
    after = done.last;
  }
}

/** Sends a statement (or a transaction) again when it met a deadlock and rolled back whole, up to 5 times. */
export async function withDeadlockRetry<T>(statement: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (error) {
      if ((error as { code?: string })?.code !== "40P01" || attempt >= 5) throw error;
    }
  }
}

/**
 * `fork(id, { fromStep, id?, overrides?, reason? })`: a new run of the source's workflow, version
 * and input, with the source's receipts before `fromStep` (docs/guide/runs.md, "Forking a run")
 * and the overridden steps' receipts carrying the given values (docs/guide/edit-and-resume.md).
 * The source is not written. Idempotent on the new id: the same fork again answers `created: false`.
 */
export async function forkRunFrom(instance: DurableInstance, id: string, options: ForkOptions): Promise<StartResult> {
  assertOpen(instance);
  if (options === null || typeof options !== "object")
    throw new InvalidInputError("fork: options is { fromStep, id?, overrides?, reason? }");
  for (const key of Object.keys(options)) {
    if (!FORK_OPTIONS.has(key)) throw new InvalidInputError(`fork: unknown option "${key}"`);
  }
  const fromStep = storableName(options.fromStep, "fork: fromStep");
  const forkId = storableName(options.id ?? randomUUID(), "fork: id");
  if (!isStorableName(id)) throw new RunNotFoundError(String(id));
  if (forkId === id) throw new InvalidInputError("fork: the fork needs an id of its own");
  const source = await findRunWorkflow(instance.db, id);
  if (!source) throw new RunNotFoundError(id);
  if (!isRegistered(instance, source)) {
    const what = source.version === null ? "" : ` version "${source.version}"`;
    throw new RunStateConflictError(
      `run "${id}" cannot be forked here: workflow "${source.workflow}"${what} is not registered in this ` +
        "deployment, and a fork replays the receipts with the code that wrote them",
    );
  }
  const workflow = instance.registry.byVersion.get(versionKey(source.workflow, source.version))!;
  const deadlineMs = workflow.deadline === undefined ? null : toBoundedMs(workflow.deadline, "deadline");
  const edit = await sealForkEdit(instance.settings, forkId, options.overrides, options.reason);
  const answer = await forkRun(instance.db, id, forkId, fromStep, deadlineMs, edit);
  switch (answer.outcome) {
    case "forked":
    case "exists":
      return forkResult(instance, forkId, answer.outcome === "forked");
    case "not_found":
      throw new RunNotFoundError(id);
    case "no_step":
      throw new InvalidInputError(`fork: run "${id}" never reached step "${fromStep}"`);
    case "refused":
      throw new RunStateConflictError(
        `fork: run "${id}" has a ${answer.kind === "start" ? "ctx.step.start" : "ctx.step.callback"} receipt ` +
          `("${answer.step}") before step "${fromStep}": a fork past it would share the source's ` +
          (answer.kind === "start" ? "child run" : "callback URL") +
          `; fork from "${answer.step}" or an earlier step`,
      );
    case "bad_override":
      throw new InvalidInputError(
        answer.kind === null
          ? `fork: run "${id}" has no step "${answer.step}" to override`
          : `fork: step "${answer.step}" is a ${answer.kind} step: only run, tx and value receipts can be ` +
              "overridden (a wait's, a child's or an AI step's receipt has the engine's own shape)",
      );
    case "compacted":
      throw new RunStateConflictError(`fork: retention deleted the receipts of run "${id}"`);
    case "conflict":
      throw new RunStateConflictError(`run "${forkId}" already exists and is not this fork; fork under a new id`);
    case "singleton_held":
      throw new RunStateConflictError(
        `fork: run "${answer.holder}" holds the singleton key of run "${id}"; fork it when that one has finished`,
        answer.holder ? { activeRunId: answer.holder } : undefined,
      );
  }
}

function forkResult(instance: DurableInstance, id: string, created: boolean): StartResult {
  return {
    id,
    created,
    get statusToken() {
      return statusTokenOf(instance, id);
    },
  };
}
