// Entry point of the ai wing (the package's `durable-next/ai`): agents and AI steps, tool approvals,
// chat turns and their routes, and their types (docs/guide/agents.md, docs/guide/chat.md). Loading
// it registers the wing with the core (ai/wing.ts): `ctx.step.ai`, and signal `tool-approval` taken
// by every workflow. The core never imports ai/ (docs/layout.md, "The ai/ wing"); the browser's part,
// the chat transport, is the client entry ai-react.ts (`durable-next/ai/react`).
import "./ai/wing";

export { type ChatTurnInput, type ChatTurnRequest, chatTurnId, chatTurnInput } from "./ai/chat-input";
export {
  type ChatTurnRecord,
  type ChatTurnStart,
  cancelChatTurn,
  readActiveChatTurn,
  startChatTurn,
} from "./ai/chat-turns";
export { createChatRoutes } from "./ai/http/chat";
export type { ChatAuthorize, ChatContext, ChatRoutes, ChatRoutesOptions } from "./ai/http/chat-types";
export { loadChat } from "./ai/load-chat";
export { TOOL_APPROVAL_SIGNAL } from "./ai/tool-approval";
export { type PendingToolApproval, toolApprovals } from "./ai/tool-approvals";
export { toolStep } from "./ai/tool-step";
export { TURN_END_PART, type TurnEnd, type TurnEndPart, turnEndOf, withTurnEnd } from "./ai/turn-end";
export { type TxToolDefinition, type TxToolOptions, txTool } from "./ai/tx-tool";
export type {
  AgentToolCall,
  AgentToolResult,
  AgentToolStep,
  AiAgentOptions,
  AiAgentResult,
  AiAgentStep,
  AiGenerateObjectOptions,
  AiGenerateTextOptions,
  AiMapOptions,
  AiObjectResult,
  AiSteps,
  AiStreamTextOptions,
  AiTextResult,
  AiTranscribeOptions,
  AiTranscriptionResult,
  ToolApproval,
} from "./ai/types";
export type { AiUsage } from "./types";
