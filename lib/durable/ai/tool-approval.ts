import { z } from "zod";

/** The signal an agent's tool call that needs approval waits for (docs/guide/agents.md, "Approvals"). */
export const TOOL_APPROVAL_SIGNAL = "tool-approval";

/**
 * Its payload, checked for every workflow whether it declares signals or not: a payload the agent
 * could not read is refused at delivery (422), never left to stall a run.
 */
export const toolApprovalSchema = z.object({
  toolCallId: z.string().min(1),
  approved: z.boolean(),
  reason: z.string().optional(),
  turnId: z.string().min(1).optional(),
  /** Who decided, when durable.decide() delivered it (the wait's receipt names them). */
  actor: z.string().min(1).optional(),
});
