import { dashboardAccess } from "@/app/dashboard-access";
import { getDurable } from "@/app/durable";

export const dynamic = "force-dynamic";

/**
 * The run page's "Export ledger": `status(id, { ledger: true })` as a JSON download, the recorded
 * run `replayTest` replays (docs/guide/edit-and-resume.md). It holds the run's input and results,
 * so it answers only a request that may operate the dashboard, as the page does.
 */
export async function GET(_request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  if ((await dashboardAccess()) !== "open") return new Response("Not found", { status: 404 });
  const { id } = await params;
  const ledger = await (await getDurable()).status(id, { ledger: true });
  if (!ledger) return new Response("Not found", { status: 404 });
  const file = `${id.replace(/[^\w.-]/g, "_")}.ledger.json`;
  return new Response(JSON.stringify(ledger, null, 2), {
    headers: {
      "content-type": "application/json; charset=utf-8",
      "content-disposition": `attachment; filename="${file}"`,
      "cache-control": "no-store",
    },
  });
}
