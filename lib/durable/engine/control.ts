// The commands that change a run from outside: cancel and retry, and `compact()` for retention
// run from a script (docs/model.md; docs/guide/retention.md, "Retention").
import { InvalidInputError, RunNotFoundError, RunStateConflictError } from "../errors";
import { isStorableName } from "../names";
import { hasUnstorableText } from "../text";
import type { RunStatus } from "../schemas";
import { cancelRun, findSingletonHolder, readRun, retryRun } from "../store";
import type { CancelOptions } from "./durable-api";
import { assertOpen, type DurableInstance } from "./instance";
import type { CompactReport } from "./retention";
import { readStatus } from "./reads";

/**
 * `cancel(id)`: cancels a run that is not terminal, and its non-terminal children unless asked not
 * to; each owner's abortSignal fires at its next write.
 */
export async function cancelById(
  instance: DurableInstance,
  id: string,
  reasonOrOptions?: string | CancelOptions,
): Promise<RunStatus> {
  assertOpen(instance);
  if (!isStorableName(id)) throw new RunNotFoundError(String(id));
  const options = typeof reasonOrOptions === "object" && reasonOrOptions !== null ? reasonOrOptions : {};
  const reason = typeof reasonOrOptions === "object" && reasonOrOptions !== null ? options.reason : reasonOrOptions;
  const children = options.children ?? "cancel";
  if (children !== "cancel" && children !== "keep")
    throw new InvalidInputError('cancel: children is "cancel" or "keep"');
  if (reason !== undefined && (typeof reason !== "string" || hasUnstorableText(reason) || reason.length > 1000)) {
    throw new InvalidInputError(
      "a cancel reason is a string of at most 1000 characters, without NUL or a lone surrogate",
    );
  }
  // The reason becomes the run's error message (and its children's): sealed under its id.
  const stored = reason === undefined ? null : await instance.codec.sealText(id, reason);
  const outcome = await cancelRun(instance.db, id, stored, children);
  if (outcome === "not_found") throw new RunNotFoundError(id);
  if (outcome === "terminal") throw new RunStateConflictError(`run "${id}" is already finished`);
  return (await readStatus(instance, id)) as RunStatus;
}

/** `retry(id)`: retries a failed run, keeping every completed receipt and external key. */
export async function retryById(instance: DurableInstance, id: string): Promise<RunStatus> {
  assertOpen(instance);
  if (!isStorableName(id)) throw new RunNotFoundError(String(id));
  const outcome = await retryRun(instance.db, id);
  if (outcome === "not_found") throw new RunNotFoundError(id);
  if (outcome === "compacted") {
    throw new RunStateConflictError(
      `run "${id}" cannot be retried: retention deleted its receipts, ` +
        "so it would start over and repeat its effects",
    );
  }
  if (outcome === "singleton_held") await refuseHeldSingleton(instance, id);
  if (outcome === "not_failed") {
    throw new RunStateConflictError(`run "${id}" has not failed; only a failed run can be retried`);
  }
  return (await readStatus(instance, id)) as RunStatus;
}

/** A retry refused because another run holds the singleton key: the conflict names that run. */
async function refuseHeldSingleton(instance: DurableInstance, id: string): Promise<never> {
  const { run } = (await readRun(instance.db, id))!;
  const holder = await findSingletonHolder(instance.db, run.workflow, run.singletonKey!);
  throw new RunStateConflictError(
    `run "${id}" cannot be retried while run "${holder}" holds its singleton key; ` +
      "retry it when that one has finished",
    holder ? { activeRunId: holder } : undefined,
  );
}

/** `compact()`: applies `retention` now, up to `limit` rows of each kind. */
export async function compactNow(instance: DurableInstance, options: { limit?: number } = {}): Promise<CompactReport> {
  assertOpen(instance);
  return instance.compactor.compact(options);
}
