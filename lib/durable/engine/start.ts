// `start()`: a new run of a registered workflow, idempotent on its id, and the status token
// its answer carries (docs/model.md).
import { randomUUID } from "node:crypto";
import type { z } from "zod";
import { resolveSecret } from "../auth/secrets";
import { statusTokenFor } from "../auth/status-token";
import { InvalidInputError, RunStateConflictError, WorkflowNotFoundError } from "../errors";
import { toJsonText } from "../json";
import { isStorableName, storableName } from "../names";
import { insertRun } from "../store";
import type { AnyWorkflow } from "../types";
import { storedVersion, versionKey } from "./define-workflow";
import type { StartResult } from "./durable-api";
import { assertOpen, type DurableInstance } from "./instance";

/** Starts a run of `workflow` (on its newest version) with `input`, or answers the run that has the id. */
export async function startRun<W extends AnyWorkflow>(
  instance: DurableInstance,
  workflow: W,
  input: z.input<W["input"]>,
  options: { id?: string } = {},
): Promise<StartResult> {
  assertOpen(instance);
  const { registry } = instance;
  if (registry.byVersion.get(versionKey(workflow.name, storedVersion(workflow.version))) !== workflow) {
    throw new WorkflowNotFoundError(workflow.name);
  }
  // Whichever version the caller names, a new run starts on the newest.
  const newest = instance.workflows.get(workflow.name)!;
  const id = storableName(options.id ?? randomUUID(), "a run id");
  const parsed = newest.input.safeParse(input);
  if (!parsed.success) {
    throw new InvalidInputError(`the input of workflow "${newest.name}" is invalid`, {
      issues: parsed.error.issues,
    });
  }
  const inputJson = toJsonText(parsed.data, { limit: instance.settings.maxResultBytes });
  const singletonKey = keyOf(newest, "singleton", parsed.data);
  const row = await insertRun(instance.db, {
    id,
    workflow: newest.name,
    inputJson,
    version: storedVersion(newest.version),
    concurrencyKey: keyOf(newest, "concurrency", parsed.data),
    singletonKey,
  });
  if (row.activeRunId !== undefined) {
    throw new RunStateConflictError(
      `workflow "${newest.name}" already has an active run for singleton key "${singletonKey}": ` +
        `"${row.activeRunId}"; start another when it has finished`,
      { activeRunId: row.activeRunId },
    );
  }
  if (row.workflow !== newest.name) {
    throw new RunStateConflictError(`run "${id}" already exists under workflow "${row.workflow}"`);
  }
  if (!row.sameInput) {
    throw new RunStateConflictError(`run "${id}" already exists with another input; start it under a new id`);
  }
  // The token is derived when read, so a caller that never reads it (a script, a test) never
  // needs DURABLE_SECRET, nor hears that it is unset.
  return {
    id,
    created: row.created,
    get statusToken() {
      return statusTokenOf(instance, id);
    },
  };
}

/** The bearer token of a run's status route, derived from DURABLE_SECRET (auth/status-token.ts). */
export function statusTokenOf(instance: DurableInstance, id: string): string {
  return statusTokenFor(resolveSecret("durable", instance.secrets?.durable, instance.log), id);
}

/** Computes a run's concurrency or singleton key from its parsed input: a storable string. */
function keyOf(workflow: AnyWorkflow, option: "concurrency" | "singleton", input: unknown): string | null {
  const keyFn = workflow[option]?.key as ((input: unknown) => unknown) | undefined;
  if (!keyFn) return null;
  const key = keyFn(input);
  if (typeof key !== "string" || !isStorableName(key)) {
    throw new InvalidInputError(
      `workflow "${workflow.name}": ${option}.key must return a string of 1 to 255 characters, ` +
        "without NUL or a lone surrogate",
    );
  }
  return key;
}
