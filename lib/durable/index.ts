// The public surface of the durable toolkit. Everything a user imports comes from here (and from
// the other entry points: next.ts for route handlers, react.ts for client components, testing.ts).
export { type AnyKysely, type ConnectOptions, connect, type DriverKind } from "./drivers/connect";
export { type Duration, toMs } from "./duration";
export { type AppDurableOptions, createAppDurable } from "./engine/app-durable";
export {
  type AdvanceOutcome,
  type BulkOptions,
  type BulkResult,
  type CallbackResult,
  type CancelOptions,
  type CompactReport,
  createDurable,
  type Durable,
  type DurableDefaults,
  type DurableOptions,
  type ForkOptions,
  type ListOptions,
  type ListPage,
  type RetentionOptions,
  type PendingToolApproval,
  type RunCallback,
  type RunEvent,
  type RunFilterOptions,
  type ScheduleInfo,
  type SignalInput,
  type SignalResult,
  type StartOptions,
  type StartResult,
  type WorkOptions,
  type WorkReport,
} from "./engine/create-durable";
export { defineWorkflow } from "./engine/define-workflow";
export { type ChatTurnInput, type ChatTurnRequest, chatTurnId, chatTurnInput } from "./ai/chat-input";
export {
  type ChatTurnRecord,
  type ChatTurnStart,
  cancelChatTurn,
  readActiveChatTurn,
  startChatTurn,
} from "./ai/chat-turns";
export { loadChat } from "./ai/load-chat";
export { TURN_END_PART, type TurnEnd, type TurnEndPart, turnEndOf, withTurnEnd } from "./ai/turn-end";
export { MissingSecretError } from "./auth/secrets";
export {
  CallbackNotFoundError,
  ChildRunFailedError,
  DuplicateStepIdError,
  DurableError,
  FatalStepError,
  InvalidInputError,
  LeaseLostError,
  ResultTooLargeError,
  RetryableStepError,
  RunNotFoundError,
  RunStateConflictError,
  StepKindMismatchError,
  StepLeaseLostError,
  StepNotReplaySafeError,
  StepTimeoutError,
  UnauthorizedError,
  WorkflowNotFoundError,
} from "./errors";
export type { RunStatus, RunSummary, TickReport } from "./schemas";
export type { StreamChunk } from "./store";
export { externalKeyFor } from "./steps/external-key";
export { TOOL_APPROVAL_SIGNAL } from "./ai/tool-approval";
export { toolStep } from "./ai/tool-step";
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
  AiUsage,
  CallbackHandle,
  CallbackOptions,
  ChildRun,
  InvokeOptions,
  Jsonified,
  RaceBranch,
  RaceResult,
  RaceValue,
  RetryBackoff,
  RunOutcome,
  SignalSchemas,
  StepApi,
  StepInfo,
  StepOptions,
  StreamWriter,
  ToolApproval,
  WaitForOptions,
  WaitForSignalOptions,
  Workflow,
  WorkflowContext,
  WorkflowDefinition,
} from "./types";
