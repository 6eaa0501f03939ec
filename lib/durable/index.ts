// The public surface of the durable toolkit. Everything a user imports comes from here (and from
// the other entry points: next.ts for route handlers, react.ts for client components, testing.ts,
// drizzle.ts, and the ai wing's ai.ts and ai-react.ts). The ai wing's names below are kept for old
// imports, deprecated: this entry loads the wing (ai/wing.ts) for them, and for `ctx.step.ai`.
import "./ai/wing";
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
export { type LifecycleInput, lifecycleInput } from "./engine/lifecycle";
export { WEBHOOK_WORKFLOW, type WebhookEndpoint, type WebhookEvent } from "./engine/webhooks";
export type { LifecycleHooks, LifecycleHookTarget } from "./lifecycle-types";
export { NotAnApproverError } from "./engine/approval-errors";
export { approvalDecision } from "./engine/approval-rules";
export type {
  ApprovalDecision,
  ApprovalPage,
  ApprovalRule,
  ApprovalsOptions,
  DecideInput,
  DecideResult,
  PendingApproval,
  WorkflowApprovals,
} from "./engine/approval-types";
export { MissingSecretError } from "./auth/secrets";
export type { EncryptionKey, EncryptionOptions } from "./encryption/keys";
export {
  CallbackNotFoundError,
  ChildRunFailedError,
  DecryptionError,
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
export type { LedgerStep, RunLedger, RunStatus, RunSummary, TickReport } from "./schemas";
export type { StreamChunk } from "./store";
export { externalKeyFor } from "./steps/external-key";
export type {
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
  WaitForOptions,
  WaitForSignalOptions,
  Workflow,
  WorkflowContext,
  WorkflowDefinition,
} from "./types";
export type {
  EventMatch,
  EventSubscription,
  PublishOptions,
  PublishResult,
  PublishTransaction,
  WaitForEventOptions,
} from "./event-types";
export type { DurableMetrics, FinishedRunStatus, LiveRunStatus } from "./metrics-types";

// The ai wing, from before it had its own entry (durable-next/ai).
export {
  /** @deprecated import from "durable-next/ai" */
  type ChatTurnInput,
  /** @deprecated import from "durable-next/ai" */
  type ChatTurnRequest,
  /** @deprecated import from "durable-next/ai" */
  chatTurnId,
  /** @deprecated import from "durable-next/ai" */
  chatTurnInput,
} from "./ai/chat-input";
export {
  /** @deprecated import from "durable-next/ai" */
  type ChatTurnRecord,
  /** @deprecated import from "durable-next/ai" */
  type ChatTurnStart,
  /** @deprecated import from "durable-next/ai" */
  cancelChatTurn,
  /** @deprecated import from "durable-next/ai" */
  readActiveChatTurn,
  /** @deprecated import from "durable-next/ai" */
  startChatTurn,
} from "./ai/chat-turns";
export {
  /** @deprecated import from "durable-next/ai" */
  loadChat,
} from "./ai/load-chat";
export {
  /** @deprecated import from "durable-next/ai" */
  TOOL_APPROVAL_SIGNAL,
} from "./ai/tool-approval";
export type {
  /** @deprecated import from "durable-next/ai" */
  PendingToolApproval,
} from "./ai/tool-approvals";
export {
  /** @deprecated import from "durable-next/ai" */
  toolStep,
} from "./ai/tool-step";
export {
  /** @deprecated import from "durable-next/ai" */
  TURN_END_PART,
  /** @deprecated import from "durable-next/ai" */
  type TurnEnd,
  /** @deprecated import from "durable-next/ai" */
  type TurnEndPart,
  /** @deprecated import from "durable-next/ai" */
  turnEndOf,
  /** @deprecated import from "durable-next/ai" */
  withTurnEnd,
} from "./ai/turn-end";
export {
  /** @deprecated import from "durable-next/ai" */
  type TxToolDefinition,
  /** @deprecated import from "durable-next/ai" */
  type TxToolOptions,
  /** @deprecated import from "durable-next/ai" */
  txTool,
} from "./ai/tx-tool";
export type {
  /** @deprecated import from "durable-next/ai" */
  AgentToolCall,
  /** @deprecated import from "durable-next/ai" */
  AgentToolResult,
  /** @deprecated import from "durable-next/ai" */
  AgentToolStep,
  /** @deprecated import from "durable-next/ai" */
  AiAgentOptions,
  /** @deprecated import from "durable-next/ai" */
  AiAgentResult,
  /** @deprecated import from "durable-next/ai" */
  AiAgentStep,
  /** @deprecated import from "durable-next/ai" */
  AiGenerateObjectOptions,
  /** @deprecated import from "durable-next/ai" */
  AiGenerateTextOptions,
  /** @deprecated import from "durable-next/ai" */
  AiMapOptions,
  /** @deprecated import from "durable-next/ai" */
  AiObjectResult,
  /** @deprecated import from "durable-next/ai" */
  AiSteps,
  /** @deprecated import from "durable-next/ai" */
  AiStreamTextOptions,
  /** @deprecated import from "durable-next/ai" */
  AiTextResult,
  /** @deprecated import from "durable-next/ai" */
  AiTranscribeOptions,
  /** @deprecated import from "durable-next/ai" */
  AiTranscriptionResult,
  /** @deprecated import from "durable-next/ai" */
  ToolApproval,
} from "./ai/types";
