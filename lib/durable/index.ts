// The public surface of the durable toolkit. Everything a user imports comes from here.
export { defineWorkflow, type Workflow, type WorkflowDefinition, type SignalSchemas } from "./define-workflow";
export { createDurable, type Durable, type DurableOptions, type DurableDefaults, type StartResult, type AdvanceOutcome } from "./create-durable";
export { connect, type ConnectOptions, type DriverKind } from "./db";
export { createAppDurable, type AppDurableOptions } from "./app-durable";
export { externalKeyFor } from "./external-key";
export { toMs, type Duration } from "./duration";
export type { StepApi, StepInfo, StepOptions, WorkflowContext } from "./step-context";
export type { ListOptions, ListPage } from "./list-runs";
export type { RunStatus, RunSummary, TickReport } from "./schemas";
export {
  DurableError,
  FatalStepError,
  RetryableStepError,
  LeaseLostError,
  DuplicateStepIdError,
  StepKindMismatchError,
  StepNotReplaySafeError,
  StepTimeoutError,
  StepLeaseLostError,
  ResultTooLargeError,
  RunNotFoundError,
  WorkflowNotFoundError,
  InvalidInputError,
  UnauthorizedError,
  RunStateConflictError,
} from "./errors";
