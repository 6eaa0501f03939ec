"use server";
// The dashboard's admin actions. They run on the server with the durable instance itself, so the
// admin secret never reaches the browser; like the routes, each advances its run right after
// answering (`after`), so the page sees it move in milliseconds rather than at the next cron tick.
import { randomBytes } from "node:crypto";
import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { after } from "next/server";
import { DurableError, InvalidInputError, RunStateConflictError } from "@/lib/durable";
import { TOOL_APPROVAL_SIGNAL } from "@/lib/durable/ai";
import { assertDashboardAccess } from "./dashboard-access";
import { getDurable } from "./durable";
import { settle, type DeliveryOutcome } from "./mock-providers/payments";
import { demos } from "./workflows/catalog";

export interface ActionResult {
  ok: boolean;
  message: string;
}

// Server actions are public endpoints: check every field as if it came from anywhere.
function runIdOf(form: FormData): string {
  const value = form instanceof FormData ? form.get("runId") : null;
  if (typeof value !== "string" || value.length === 0 || value.length > 255)
    throw new InvalidInputError("not a run id");
  return value;
}

/** Advances the run after the response, inside this function's time (maxDuration 60 on the pages). */
async function advanceSoon(id: string) {
  const durable = await getDurable();
  after(async () => {
    try {
      await durable.advance(id, { budgetMs: 50_000 });
    } catch (e) {
      console.warn(`[dashboard] advancing ${id} failed: ${(e as Error)?.stack ?? e}`);
    }
  });
}

/** Runs an action; known refusals (finished run, timed-out wait…) become a message, not a crash. */
async function attempt(what: string, fn: () => Promise<string>): Promise<ActionResult> {
  try {
    // Every action asks itself: a server action is an endpoint anyone may POST to with its id.
    await assertDashboardAccess();
    const message = await fn();
    revalidatePath("/");
    return { ok: true, message };
  } catch (e) {
    if (DurableError.is(e)) return { ok: false, message: e.message };
    console.warn(`[dashboard] ${what} failed: ${(e as Error)?.stack ?? e}`);
    return { ok: false, message: `${what} failed: ${(e as Error)?.message ?? e}` };
  }
}

/** Starts a demo with its sample input and opens its run page. */
export async function startDemo(workflow: string): Promise<void> {
  await assertDashboardAccess();
  const demo = demos.find((d) => d.workflow === workflow);
  if (!demo) throw new InvalidInputError(`no demo "${String(workflow).slice(0, 100)}"`);
  const durable = await getDurable();
  const definition = durable.workflows.get(demo.workflow)!;
  const { id } = await durable.start(definition, demo.input, {
    id: `${demo.workflow}-${randomBytes(4).toString("hex")}`,
  });
  await advanceSoon(id);
  revalidatePath("/");
  redirect(`/runs/${encodeURIComponent(id)}`);
}

/*
 * The run page's actions are form actions (`useActionState`: the previous result, then the form),
 * so they work as plain HTML forms before the page hydrates, or without JavaScript at all.
 */

/**
 * A person's yes or no, sent as signal `name` with `{ approved, by: "dashboard" }` (the pressed
 * button's `approved` is "true" or "false"). One answer per run from the dashboard: the delivery id
 * makes a second click a repeat, not a second delivery.
 */
function answer(name: string, what: string, said: { approved: string; rejected: string; repeat: string }) {
  return async (_previous: ActionResult | null, form: FormData): Promise<ActionResult> =>
    attempt(`sending the ${what}`, async () => {
      const id = runIdOf(form);
      const approved = form.get("approved") === "true";
      const durable = await getDurable();
      const result = await durable.signal({
        runId: id,
        name,
        payload: { approved, by: "dashboard" },
        id: `dashboard-${name}`,
      });
      await advanceSoon(id);
      if (!result.signalled) return said.repeat;
      return approved ? said.approved : said.rejected;
    });
}

/** The approver's answer to a refund plan: the `decision` signal. */
export const decide = answer("decision", "decision", {
  approved: "Approved. The plan executes now.",
  rejected: "Rejected.",
  repeat: "A decision had already been delivered; this one changed nothing.",
});

/** The person's answer to a research outline: the `outline` signal. */
export const decideOutline = answer("outline", "answer to the outline", {
  approved: "Approved. The answer is being written now.",
  rejected: "Rejected: no answer is written.",
  repeat: "An answer to the outline had already been delivered; this one changed nothing.",
});

/**
 * The answer to an agent's tool call that waits for approval (the run page's approvals panel):
 * signal `tool-approval` with `{ toolCallId, approved, turnId }`, once per call of a turn (its
 * delivery id): a model may use a call id again in a later turn (docs/guide/agents.md, "Approvals").
 */
export async function answerToolCall(_previous: ActionResult | null, form: FormData): Promise<ActionResult> {
  return attempt("answering the tool call", async () => {
    const id = runIdOf(form);
    const toolCallId = form.get("toolCallId");
    if (typeof toolCallId !== "string" || toolCallId.length === 0 || toolCallId.length > 255) {
      throw new InvalidInputError("not a tool call id");
    }
    const turnId = form.get("turnId");
    if (typeof turnId !== "string" || turnId.length === 0 || turnId.length > 200) {
      throw new InvalidInputError("not a turn id");
    }
    const approved = form.get("approved") === "true";
    const durable = await getDurable();
    const result = await durable.signal({
      runId: id,
      name: TOOL_APPROVAL_SIGNAL,
      payload: approved
        ? { toolCallId, approved, turnId }
        : { toolCallId, approved, turnId, reason: "denied from the dashboard" },
      id: `dashboard-approval-${turnId}/${toolCallId}`.slice(0, 255),
    });
    await advanceSoon(id);
    if (!result.signalled) return "This call had been answered already; this answer changed nothing.";
    return approved ? "Approved: the tool runs now." : "Denied: the model is told so.";
  });
}

/** The mock payment provider settles the run's charge and sends `payment.settled` (twice, as providers do). */
export async function settlePayment(_previous: ActionResult | null, form: FormData): Promise<ActionResult> {
  return attempt("settling the payment", async () => {
    const id = runIdOf(form);
    const durable = await getDurable();
    const outcomes = await settle(id, async (webhookId, payload): Promise<DeliveryOutcome> => {
      try {
        // What POST /api/durable/signal does with a verified delivery: the webhook id is the delivery id.
        const result = await durable.signal({ runId: id, name: "payment.settled", payload, id: webhookId });
        return result.signalled ? "delivered" : "duplicate";
      } catch (e) {
        if (RunStateConflictError.is(e)) return "refused";
        throw e;
      }
    });
    await advanceSoon(id);
    const delivered = outcomes.filter((o) => o === "delivered").length;
    const duplicates = outcomes.filter((o) => o === "duplicate").length;
    const refused = outcomes.includes("refused") ? ", refused (the run no longer waits)" : "";
    return (
      `The provider sent payment.settled ${outcomes.length} times: ` +
      `${delivered} delivered, ${duplicates} recognised as a repeat${refused}.`
    );
  });
}

export async function cancelRun(_previous: ActionResult | null, form: FormData): Promise<ActionResult> {
  return attempt("cancelling", async () => {
    const durable = await getDurable();
    await durable.cancel(runIdOf(form), "cancelled from the dashboard");
    return "Cancelled.";
  });
}

export async function retryRun(_previous: ActionResult | null, form: FormData): Promise<ActionResult> {
  return attempt("retrying", async () => {
    const id = runIdOf(form);
    const durable = await getDurable();
    await durable.retry(id);
    await advanceSoon(id);
    return "Retrying: completed steps keep their receipts; failed ones run again.";
  });
}
