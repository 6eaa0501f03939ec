// The storage boundary: every durable_* statement is one typed function here, and nothing outside
// store/ writes SQL (a lint rule holds it; docs/decisions.md, "One storage boundary").
// The functions are listed in the order an invocation meets them (docs/sql.md).
export { type DebouncedRun, type DebounceParameters, insertDebouncedRun } from "./insert-debounced-run";
export { type Followups, type FollowupTarget, type InsertedRun, insertRun, type RunToInsert } from "./insert-run";
export { type InsertedOne, insertRuns } from "./insert-runs";
export { type EventToPublish, type PublishedEvent, publishEvent } from "./publish-event";
export { readAppEvents, type StoredAppEvent } from "./read-app-events";
export { countDueRuns } from "./count-due";
export { type MetricsRead, readMetrics } from "./read-metrics";
export { failUnknownVersions } from "./fail-unknown-versions";
export { releaseRateHolds } from "./release-rate-holds";
export { advanceSchedule, planSchedule, readSchedules, type ScheduleRecord } from "./schedules";
export { msUntilNextWake, type NextWake, readNextWake } from "./next-wake";
export { type ClaimedRun, type ClaimRequest, claimDueRun, claimDueRuns, type MailboxEntry } from "./claim-run";
export { type ChildNotStarted, recordStep, type RecordResult } from "./record-step";
export { appendStream } from "./append-stream";
export { suspendRun, type Wait } from "./suspend-run";
export { releaseRun } from "./release-run";
export { releaseUnreadable } from "./release-unreadable";
export { type FinishResult, finishRun, finishRunAndClaim, type RunEnd } from "./finish-run";
export { type ContinueResult, continueRun, type SuccessorToInsert } from "./continue-run";
export { heartbeatRun } from "./heartbeat-run";
export { insertRecordedRun, type RecordedReceipt } from "./insert-recorded-run";
export { readStepResult } from "./read-step-result";
export { insertEvent } from "./insert-event";
export { readRun } from "./read-run";
export { readStream, type StreamChunk } from "./read-stream";
export { readEvents, type RunEvent } from "./read-events";
export { findDebouncedRun, findRunWorkflow, findSingletonHolder, readRunInput } from "./find-run";
export { deliverSignal, type DeliveryOutcome } from "./deliver-signal";
export { cancelRun } from "./cancel-run";
export { listOpenDescendants } from "./list-open-descendants";
export { endOverdueRun } from "./end-overdue";
export { type CallbackDelivery, type CallbackRecord, deliverCallback, readCallback } from "./deliver-callback";
export { type AgentStepRecord, listAgentSteps } from "./list-agent-steps";
export { listCallbacks, type RunCallbackRecord } from "./list-callbacks";
export { retryRun } from "./retry-run";
export { type ChatTurnRecord, readChatTurn, setChatTurn } from "./chat-turns";
export { checkCursor, listRuns, narrowsRuns, type RunFilter, type RunPosition, type RunQuery } from "./list-runs";
export { type BulkBatch, cancelRunsBatch, retryRunsBatch } from "./bulk-runs";
export { type ForkOutcome, type ForkOverride, forkRun } from "./fork-run";
export {
  type CompactedRows,
  type CompactRequest,
  compactRows,
  compactStatement,
  type DueKinds,
  dueForCompaction,
} from "./compact";
export { shiftClock } from "./shift-clock";
export { migrate } from "./migrate";
export type { ChildToStart, StepOutcome } from "./step-outcome";
export type { RaceBranchRow, RunRecord, StepRecord } from "./rows";
export type { DurableDb, DurableTables, Executor } from "./tables";
export {
  inTransaction,
  lockRunBatch,
  PAYLOAD_COLUMNS,
  type PayloadColumn,
  readPayloads,
  type StoredPayload,
  writePayload,
} from "./reencrypt-payloads";
export {
  type DecisionOutcome,
  type DecisionRequest,
  decideApproval,
  decideApprovalItem,
  decidedKeys,
  type ItemDecisionRequest,
} from "./decide-approval";
export {
  type ApprovalQuery,
  type ApprovalRow,
  type ApprovalTarget,
  checkApprovalCursor,
  listApprovals,
} from "./list-approvals";
