import { convertToModelMessages, tool } from "ai";
import { sql } from "kysely";
import * as z from "zod";
import { defineWorkflow } from "@/lib/durable";
import { chatTurnInput, txTool } from "@/lib/durable/ai";
import { providerDb } from "../mock-providers/db";
import { formatMoney } from "../mock-providers/payments";
import { chatModel } from "./chat-model";

/**
 * The demo shop's tools, for the support chat's agent (`runId`: the turn, recorded with a refund).
 * Their names are words a person types: the mock model calls the tools a message names
 * ("lookupOrder 1042 and stock", "refund order 1042"), a real model reads their descriptions.
 */
export function shopTools(runId: string) {
  return {
    lookupOrder: tool({
      description: "Looks up an order of the shop by its number: the item, quantity, amount and status.",
      inputSchema: z.object({ orderId: z.string().min(1).max(40).describe("The order number, such as 1042") }),
      execute: async ({ orderId }) => {
        const { rows } = await sql<{ name: string; quantity: number; amount_cents: number; status: string }>`
          select i.name, o.quantity, o.amount_cents, o.status
          from demo_orders o join demo_inventory i on i.sku = o.sku where o.id = ${orderId}`.execute(providerDb());
        const order = rows[0];
        if (!order) return { orderId, found: false };
        return {
          orderId,
          found: true,
          item: order.name,
          quantity: order.quantity,
          amount: formatMoney(order.amount_cents),
          status: order.status,
        };
      },
    }),
    stock: tool({
      description: "How many units of a product the shop can still sell (on hand, less what open orders reserved).",
      inputSchema: z.object({ sku: z.enum(["mug", "tee", "poster"]).describe("The product: mug, tee or poster") }),
      execute: async ({ sku }) => {
        const { rows } = await sql<{ name: string; available: number; price_cents: number }>`
          select name, on_hand - reserved as available, price_cents from demo_inventory where sku = ${sku}`.execute(
          providerDb(),
        );
        const item = rows[0];
        return item
          ? { sku, item: item.name, available: item.available, price: formatMoney(item.price_cents) }
          : { sku };
      },
    }),
    // A write to this database: a tx step, so the refund row and the call's receipt commit together,
    // once, however often the turn is replayed or its function killed (docs/guide/agents.md). It
    // runs only once a person approved the call (signal `tool-approval`).
    refund: txTool({
      description: "Refunds an order in full. A person approves every refund before it is made.",
      inputSchema: z.object({ orderId: z.string().min(1).max(40).describe("The order number, such as 1042") }),
      needsApproval: true,
      execute: async ({ orderId }, { tx, experimental_context: step }) => {
        const { rows } = await sql<{ amount_cents: number; status: string }>`
          select amount_cents, status from demo_orders where id = ${orderId} for update`.execute(tx);
        const order = rows[0];
        if (!order) return { orderId, refunded: false, reason: "no such order" };
        if (order.status === "refunded") return { orderId, refunded: false, reason: "already refunded" };
        await sql`
          insert into demo_refunds (order_id, amount_cents, run_id, tool_call_key)
          values (${orderId}, ${order.amount_cents}, ${runId}, ${step.externalKey})`.execute(tx);
        await sql`update demo_orders set status = 'refunded', updated_at = now() where id = ${orderId}`.execute(tx);
        return { orderId, refunded: true, amount: formatMoney(order.amount_cents) };
      },
    }),
  };
}

const SYSTEM =
  "You are the support assistant of a small shop that sells an enamel mug, a logo T-shirt and a risograph " +
  "poster. Use the tools to look up orders and stock; refund only when the customer asks for a refund. " +
  "Answer in a few plain sentences.";

/**
 * The support chat of the demo shop (app/chat/page.tsx): each turn of a chat is a run of this
 * workflow (docs/guide/chat.md), its answer an agent (`ctx.step.ai.agent`) whose model turns and
 * tool calls are steps. A reload, a crash or a killed function replays the finished ones from their
 * receipts; the answer's chunks go to the run's stream, which the page reads.
 */
export const supportChat = defineWorkflow({
  name: "support-chat",
  input: chatTurnInput,
  async run(ctx, input) {
    // The whole conversation as the client sent it; tool calls a stopped turn left unanswered are dropped.
    const messages = await convertToModelMessages(input.messages, { ignoreIncompleteToolCalls: true });
    const result = await ctx.step.ai.agent("answer", {
      model: chatModel(),
      system: SYSTEM,
      messages,
      tools: shopTools(ctx.runId),
      stream: true,
      maxSteps: 6,
      // A turn streams for a while: a lease that still fits the 55 s budget of a 60 s function.
      turnOptions: { retries: 2, timeout: "40s", lease: "45s" },
    });
    return { text: result.text };
  },
});
