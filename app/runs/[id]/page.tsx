import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { DashboardClosed } from "@/app/components/dashboard-closed";
import { dashboardAccess } from "@/app/dashboard-access";
import { TIMELINE_EVENT_LIMIT, toTimelineEvents } from "@/app/components/run-timeline";
import { RunView } from "@/app/components/run-view";
import { ToolApprovals } from "@/app/components/tool-approvals";
import { readComposition } from "./composition";
import { getDurable } from "@/app/durable";
import { toolApprovals } from "@/lib/durable/ai";
import { demos, workflowTitles } from "@/app/workflows/catalog";
import { DemoDetails, DemoLive } from "./demo-details";

export const dynamic = "force-dynamic";
// The server actions of this page advance their run after answering: give them the same time as the routes.
export const maxDuration = 60;

type Props = { params: Promise<{ id: string }> };

const runIdOf = async ({ params }: Props) => {
  const { id } = await params;
  try {
    return decodeURIComponent(id);
  } catch {
    return id;
  }
};

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Run ${await runIdOf({ params })} · durable-next` };
}

export default async function RunPage({ params }: Props) {
  const id = await runIdOf({ params });
  const access = await dashboardAccess();
  if (access !== "open") return <DashboardClosed access={access} next={`/runs/${encodeURIComponent(id)}`} />;
  const durable = await getDurable();
  const run = await durable.status(id);
  if (!run) notFound();
  // After the status read, which may have healed the run and written that event.
  const events = toTimelineEvents(await durable.events(id, { limit: TIMELINE_EVENT_LIMIT }));
  // The per-run status token: it reads this run's status and stream, and nothing else.
  const token = durable.statusToken(id);
  // Parent, children and callback URLs: read here, as the admin; the URLs never enter RunStatus.
  const { family, callbacks } = await readComposition(durable, run);
  // An agent's calls that wait for a person (signal tool-approval), with Approve and Deny.
  const approvals = run.status === "waiting" ? await toolApprovals(durable, id) : [];
  return (
    <RunView
      initial={run}
      renderedAt={Date.now()}
      token={token}
      title={workflowTitles[run.workflow] ?? run.workflow}
      demo={demos.find((d) => d.workflow === run.workflow) ?? null}
      details={<DemoDetails runId={run.id} workflow={run.workflow} />}
      live={
        <>
          <DemoLive run={run} token={token} />
          <ToolApprovals runId={run.id} approvals={approvals} />
        </>
      }
      events={events}
      family={family}
      callbacks={callbacks}
      callbackForm={process.env.NODE_ENV !== "production"}
      forkable
    />
  );
}
