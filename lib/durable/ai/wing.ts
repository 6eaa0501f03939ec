// The ai wing's registration with the core (engine/wings.ts): the signal every agent's approval
// uses, `ctx.step.ai`, the facade's deprecated `toolApprovals(runId)`, and
// the tool calls durable.approvals() lists. Loaded by ai.ts, and by
// index.ts for the names it still re-exports; the core never imports it (docs/layout.md).
import type { Durable } from "../engine/durable-api";
import { registerWing } from "../engine/wings";
import { createAiSteps } from "./ai-steps";
import { TOOL_APPROVAL_SIGNAL, toolApprovalSchema } from "./tool-approval";
import { toolApprovalSource } from "./tool-approval-source";
import { toolApprovals } from "./tool-approvals";

registerWing({
  name: "ai",
  signals: { [TOOL_APPROVAL_SIGNAL]: toolApprovalSchema },
  steps: { ai: createAiSteps },
  approvals: toolApprovalSource,
  methods: { toolApprovals: (durable: Durable) => (runId: string) => toolApprovals(durable, runId) },
});
