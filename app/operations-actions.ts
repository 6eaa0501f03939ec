"use server";
// The operator's actions of the dashboard (docs/guide/dashboard.md, "Operating many runs"):
// cancel or retry the runs selected on the list, after a confirmation step the server renders, and
// fork a run from a step of its timeline. Like app/actions.ts, every export is a public endpoint,
// so each one checks who sent it before it reads anything from the form.
import { randomBytes } from "node:crypto";
import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { after } from "next/server";
import { DurableError, InvalidInputError, RunNotFoundError, RunStateConflictError } from "@/lib/durable";
import type { ActionResult } from "./actions";
import { assertDashboardAccess } from "./dashboard-access";
import { getDurable } from "./durable";

/** The most runs one bulk action takes: a page of the list is 25. */
const MAX_SELECTED = 200;

export type BulkOperation = "cancel" | "retry";

/** Where the bulk form is: asking to confirm these ids, done (with the counts), or refused. */
export type BulkState =
  | { phase: "confirm"; operation: BulkOperation; ids: string[] }
  | { phase: "done"; operation: BulkOperation; selected: number; matched: number; changed: number; message: string }
  | { phase: "refused"; message: string };

const operationOf = (value: FormDataEntryValue | null): BulkOperation | null =>
  value === "cancel" || value === "retry" ? value : null;

/**
 * The run ids a step of the form names: at least one, at most MAX_SELECTED. None is refused at
 * either step, as a bulk filter that names nothing is (docs/guide/dashboard.md, "Operating many runs").
 */
function idsOf(form: FormData, field: string): string[] {
  const ids = [...new Set(form.getAll(field))];
  if (ids.length === 0) throw new InvalidInputError("Select the runs first.");
  if (ids.length > MAX_SELECTED) throw new InvalidInputError(`at most ${MAX_SELECTED} runs at once`);
  for (const id of ids) {
    if (typeof id !== "string" || id.length === 0 || id.length > 255) throw new InvalidInputError("not a run id");
  }
  return ids as string[];
}

/**
 * The list's bulk form. `operation` (a pressed Cancel or Retry) asks to confirm the checked runs
 * (`select`); `confirm` acts on exactly the ids that were confirmed (`confirmId`), whatever the
 * boxes say meanwhile; `back` drops the confirmation.
 */
export async function bulkRuns(_previous: BulkState | null, form: FormData): Promise<BulkState | null> {
  try {
    await assertDashboardAccess();
    if (!(form instanceof FormData)) throw new InvalidInputError("not a form");
    if (form.get("back") !== null) return null;
    const confirmed = operationOf(form.get("confirm"));
    if (confirmed) return await applyBulk(confirmed, idsOf(form, "confirmId"));
    const operation = operationOf(form.get("operation"));
    if (!operation) throw new InvalidInputError("cancel or retry?");
    return { phase: "confirm", operation, ids: idsOf(form, "select") };
  } catch (e) {
    if (DurableError.is(e)) return { phase: "refused", message: e.message };
    throw e;
  }
}

/**
 * Each run by the single-run command, under its own fence (`durable.cancel`, `durable.retry`): the
 * list's filter has no id list, and a page's worth of runs is a few statements. `matched` counts
 * the selected runs the action applied to (not finished, for a cancel; failed, for a retry),
 * `changed` the ones this call changed; a run refused as finished, not failed or gone is neither.
 */
async function applyBulk(operation: BulkOperation, ids: string[]): Promise<BulkState> {
  const durable = await getDurable();
  let matched = 0;
  let changed = 0;
  const retried: string[] = [];
  for (const id of ids) {
    try {
      if (operation === "cancel") await durable.cancel(id, "cancelled from the dashboard (bulk)");
      else {
        await durable.retry(id);
        retried.push(id);
      }
      matched += 1;
      changed += 1;
    } catch (e) {
      if (RunStateConflictError.is(e) || RunNotFoundError.is(e)) continue;
      throw e;
    }
  }
  if (retried.length > 0) advanceAfter(retried);
  revalidatePath("/");
  const done = operation === "cancel" ? "Cancelled" : "Retried";
  return {
    phase: "done",
    operation,
    selected: ids.length,
    matched,
    changed,
    message: `${done} ${changed} of ${ids.length} selected: matched ${matched}, changed ${changed}.`,
  };
}

/** Advances the runs after the response, as the single-run actions do (app/actions.ts). */
function advanceAfter(ids: string[]) {
  after(async () => {
    const durable = await getDurable();
    for (const id of ids) {
      try {
        await durable.advance(id, { budgetMs: 20_000 });
      } catch (e) {
        console.warn(`[dashboard] advancing ${id} failed: ${(e as Error)?.stack ?? e}`);
      }
    }
  });
}

/**
 * "Fork from here" on a step of the timeline: `durable.fork(runId, { fromStep })`, then the new
 * run's page. A refusal (a step before it started a child or holds a callback, a version this
 * deployment does not register…) is the form's message instead.
 */
export async function forkFromStep(_previous: ActionResult | null, form: FormData): Promise<ActionResult> {
  let forkId: string;
  try {
    await assertDashboardAccess();
    const runId = form instanceof FormData ? form.get("runId") : null;
    const stepId = form instanceof FormData ? form.get("stepId") : null;
    if (typeof runId !== "string" || runId.length === 0 || runId.length > 255)
      throw new InvalidInputError("not a run id");
    if (typeof stepId !== "string" || stepId.length === 0 || stepId.length > 255) {
      throw new InvalidInputError("not a step id");
    }
    const durable = await getDurable();
    const id = `${runId.slice(0, 200)}-fork-${randomBytes(4).toString("hex")}`;
    forkId = (await durable.fork(runId, { fromStep: stepId, id })).id;
    after(async () => {
      try {
        await durable.advance(forkId, { budgetMs: 50_000 });
      } catch (e) {
        console.warn(`[dashboard] advancing ${forkId} failed: ${(e as Error)?.stack ?? e}`);
      }
    });
  } catch (e) {
    if (DurableError.is(e)) return { ok: false, message: `Not forked: ${e.message}` };
    throw e;
  }
  revalidatePath("/");
  redirect(`/runs/${encodeURIComponent(forkId)}`);
}
