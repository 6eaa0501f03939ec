// `callbacks(runId)`: the callback URLs a run made, for the operator's run page
// (docs/guide/dashboard.md, "Composition on the run page"). A URL is a capability for a third party:
// it is derived here from the callback's id and DURABLE_SECRET, as `ctx.step.callback` derives it,
// and never enters RunStatus, which a run's status token reads in an end user's browser.
import { isStorableName } from "../names";
import { listCallbacks } from "../store";
import type { RunCallback } from "./durable-api";
import { assertOpen, type DurableInstance } from "./instance";

/** The most callbacks one read answers: a run making more is not one a page lists. */
const MAX_CALLBACKS = 200;

/** The run's callbacks, oldest first, each with its token and URL; [] for an unknown or unstorable id. */
export async function listRunCallbacks(instance: DurableInstance, runId: string): Promise<RunCallback[]> {
  assertOpen(instance);
  if (!isStorableName(runId)) return [];
  const compose = instance.settings.compose;
  if (!compose) throw new Error("this instance was made without composition support");
  const rows = await listCallbacks(instance.db, runId, MAX_CALLBACKS);
  return rows.map((row) => {
    const token = compose.callbackToken(row.id);
    return {
      id: row.id,
      stepId: row.stepId,
      token,
      url: compose.callbackUrl(token),
      deadlineAt: row.deadlineAt,
      deliveredAt: row.deliveredAt,
    };
  });
}
