// `ctx.continueAsNew(input)` (docs/guide/continue-as-new.md): the run ends as completed
// with `continuedAs` set, and its successor (same workflow on its newest version, a fresh ledger,
// the keys, priority, tags and parent carried over) is inserted by the same statement under the
// fence (durable_continue_run, docs/sql.md). The input is checked here, before anything is written.
import { createHash } from "node:crypto";
import { InvalidInputError, RunStateConflictError, serializeError } from "../../errors";
import { MAX_NAME_LENGTH } from "../../names";
import type { AnyWorkflow } from "../../types";
import type { Execution } from "./execution";

/** The longest run id a chain keeps whole in its successors' ids; a longer one is cut and hashed. */
const WHOLE_ID_LENGTH = MAX_NAME_LENGTH - 25;

/**
 * The id of a run's successor, derived from the run's own: `<first id>~1`, then `~2`, `~3` … along
 * the chain (a run that continues another, `continuedFrom` set, has an id of that shape), so a
 * replay or a second owner names the same successor. A first id over 230 characters is cut to 200
 * and followed by 16 hex digits of its SHA-256, so every id of the chain stays under 255.
 */
export function successorIdOf(runId: string, isSuccessor: boolean): string {
  const link = isSuccessor ? /^([\s\S]*)~(\d{1,15})$/.exec(runId) : null;
  if (link) return `${link[1]}~${Number(link[2]) + 1}`;
  const base =
    runId.length <= WHOLE_ID_LENGTH
      ? runId
      : `${runId.slice(0, 200)}~${createHash("sha256").update(runId).digest("hex").slice(0, 16)}`;
  return `${base}~1`;
}

/**
 * Checks `input` against the workflow's input schema (its newest version, as a start would) and
 * stops the execution to continue as new: the body never goes on past this call. Bad input
 * rejects with `InvalidInputError` and stops nothing (the body may catch it).
 */
export function continueAsNew(exec: Execution, workflow: AnyWorkflow, input: unknown): Promise<never> {
  const compose = exec.settings.compose;
  if (!compose) return Promise.reject(new Error("this execution was made without composition support"));
  // Inside a step's function the stop would wait for that step for ever: refuse it as bad input.
  if (exec.inFlight > 0) {
    return Promise.reject(
      new InvalidInputError(
        `ctx.continueAsNew: ${exec.inFlight} step(s) in flight; call it from the body once its steps settled, ` +
          "never from inside a step's function; the run was left as it is",
      ),
    );
  }
  const run = exec.claim.run;
  const id = successorIdOf(run.id, run.continuedFrom !== null);
  let prepared: ReturnType<typeof compose.prepare>;
  try {
    prepared = compose.prepare(workflow, input, id);
  } catch (error) {
    if (InvalidInputError.is(error)) {
      return Promise.reject(
        new InvalidInputError(`ctx.continueAsNew: ${error.message}; the run was left as it is`, {
          issues: error.issues,
        }),
      );
    }
    return Promise.reject(error);
  }
  return exec.stop({
    kind: "continue",
    successor: {
      id: prepared.id,
      workflow: prepared.workflow,
      inputJson: prepared.inputJson,
      version: prepared.version ?? null,
      deadlineInMs: prepared.deadlineInMs,
    },
  });
}

/** The error a run fails with when a run already has its successor's id (a start under that id, say). */
export function successorTaken(runId: string, successorId: string) {
  return serializeError(
    new RunStateConflictError(
      `run "${runId}" could not continue as new: its successor's id "${successorId}" is taken by another run`,
    ),
  );
}
