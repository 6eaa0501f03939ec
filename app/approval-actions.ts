"use server";
// The inbox's action (docs/guide/dashboard.md, "Approvals"): one person's decision on a run's
// approval, `durable.decide()`. Like app/actions.ts, a public endpoint: it checks who sent it
// before it reads the form, and every field as if it came from anywhere.
import { revalidatePath } from "next/cache";
import { after } from "next/server";
import { DurableError, InvalidInputError } from "@/lib/durable";
import type { ActionResult } from "./actions";
import { assertDashboardAccess } from "./dashboard-access";
import { getDurable } from "./durable";

function textOf(form: FormData, field: string, max: number, what: string): string {
  const value = form.get(field);
  if (typeof value !== "string" || value.trim().length === 0 || value.length > max)
    throw new InvalidInputError(`${what} is 1 to ${max} characters`);
  return value.trim();
}

/**
 * Approve or reject (the pressed button's `verdict`) as the actor the form names. The dashboard
 * acts as the admin, so the actor is who the operator says they are: an app with its own sign-in
 * takes it from the session instead (docs/guide/approvals.md, "Deciding").
 */
export async function decideApproval(_previous: ActionResult | null, form: FormData): Promise<ActionResult> {
  try {
    await assertDashboardAccess();
    if (!(form instanceof FormData)) throw new InvalidInputError("not a form");
    const runId = textOf(form, "runId", 255, "a run id");
    const name = textOf(form, "name", 255, "an approval name");
    const actor = textOf(form, "actor", 100, "Your name");
    const reasonText = form.get("reason");
    const reason = typeof reasonText === "string" && reasonText.trim() ? reasonText.trim() : undefined;
    // An agent's tool call (docs/guide/approvals.md, "Tool approvals"): which call, of which turn.
    const toolCallId = form.has("toolCallId") ? textOf(form, "toolCallId", 1000, "a tool call id") : undefined;
    const turnId = form.has("turnId") ? textOf(form, "turnId", 1000, "a turn id") : undefined;
    const verdict = form.get("verdict");
    if (verdict !== "approve" && verdict !== "reject") throw new InvalidInputError("approve or reject?");
    const durable = await getDurable();
    const result = await durable.decide({
      runId,
      name,
      actor,
      approved: verdict === "approve",
      ...(reason ? { reason } : {}),
      ...(toolCallId ? { toolCallId } : {}),
      ...(turnId ? { turnId } : {}),
    });
    if (result.completed) {
      after(async () => {
        try {
          await durable.advance(runId, { budgetMs: 50_000 });
        } catch (e) {
          console.warn(`[dashboard] advancing ${runId} failed: ${(e as Error)?.stack ?? e}`);
        }
      });
    }
    revalidatePath("/approvals");
    const message = result.completed
      ? verdict === "approve"
        ? `Approved by ${actor}: the wait is decided (${result.approvals} of ${result.quorum}).`
        : `Rejected by ${actor}: the wait is decided.`
      : `Approved by ${actor}: ${result.approvals} of ${result.quorum} approvals.`;
    return { ok: true, message };
  } catch (e) {
    if (DurableError.is(e)) return { ok: false, message: e.message };
    console.warn(`[dashboard] deciding failed: ${(e as Error)?.stack ?? e}`);
    return { ok: false, message: `deciding failed: ${(e as Error)?.message ?? e}` };
  }
}
