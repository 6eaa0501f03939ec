import type { CallbackView } from "@/app/components/callback-panel";
import { CHILDREN_SHOWN, type RunLink } from "@/app/components/run-family";
import type { Durable, RunStatus } from "@/lib/durable";

/**
 * What the run page shows of a run's composition (docs/guide/dashboard.md, "Composition on the run
 * page"), read on the server: its parent, its first children, and its callback URLs. The URLs come
 * from `durable.callbacks`, an admin read: they are capabilities, and never part of RunStatus.
 */
export async function readComposition(
  durable: Durable,
  run: RunStatus,
): Promise<{ family: { parent: RunLink | null; children: RunLink[]; more: boolean }; callbacks: CallbackView[] }> {
  const [parent, page, callbacks] = await Promise.all([
    run.parentId ? durable.status(run.parentId) : null,
    durable.list({ parentId: run.id, limit: CHILDREN_SHOWN }),
    run.steps.some((step) => step.kind === "callback") ? durable.callbacks(run.id) : [],
  ]);
  const link = ({ id, workflow, status }: RunLink): RunLink => ({ id, workflow, status });
  return {
    family: { parent: parent ? link(parent) : null, children: page.runs.map(link), more: page.nextCursor !== null },
    callbacks: callbacks.map((callback) => ({
      id: callback.id,
      stepId: callback.stepId,
      url: callback.url,
      deadlineAt: callback.deadlineAt?.toISOString() ?? null,
      deliveredAt: callback.deliveredAt?.toISOString() ?? null,
    })),
  };
}
