// The types of approvals across runs (docs/guide/approvals.md): what durable.decide() takes and
// answers, and what durable.approvals() lists. What defineWorkflow({ approvals }) takes is in
// signal-types.ts (an approval is a signal a workflow marks), re-exported here.
export type { ApprovalRule, WorkflowApprovals } from "../signal-types";

/** What a wait on an approval resolves to: the decision that completed it. */
export interface ApprovalDecision {
  approved: boolean;
  actor: string;
  reason: string | null;
}

/** `durable.decide()`'s argument: one person's decision on the run's wait for approval `name`. */
export interface DecideInput {
  runId: string;
  /** The signal name the workflow marks as an approval. */
  name: string;
  /** Who decides: a storable name (stored plain, like tags). */
  actor: string;
  approved: boolean;
  /** Free text, stored sealed when encryption is on; at most 2,000 characters. */
  reason?: string;
  /** When given, the run must belong to this workflow (else RunStateConflictError). */
  workflow?: string;
  /** With `name: "tool-approval"`: the agent's tool call decided (`toolCallId` of approvals()). */
  toolCallId?: string;
  /** With `toolCallId`: the turn that asked, when a model used the call id in two turns. */
  turnId?: string;
}

export interface DecideResult {
  ok: true;
  /** This decision completed the wait (a reject, or the approval that reached the quorum). */
  completed: boolean;
  /** Distinct actors who approved this wait so far. */
  approvals: number;
  quorum: number;
}

export interface ApprovalsOptions {
  tag?: string;
  workflow?: string;
  /** 1 to 200, 50 by default. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/** A wait a person decides, as `durable.approvals()` lists it. */
export interface PendingApproval {
  /**
   * "signal": a signal the workflow marks in `approvals`; "tool": an agent's tool call waiting on
   * signal `tool-approval`, one item per call (`toolCallId`, `toolName`).
   */
  kind: "signal" | "tool";
  runId: string;
  workflow: string;
  /** The approval's signal name. */
  name: string;
  stepId: string;
  /** The run's input, opened; for a tool call, the arguments the model gave the tool. */
  input: unknown;
  tags: string[];
  waitingSince: Date;
  /** Milliseconds since the wait began, on the database clock. */
  ageMs: number;
  quorum: number;
  /** The decisions recorded so far (approvals short of the quorum), oldest first. */
  decisions: { actor: string; approved: boolean; reason: string | null; decidedAt: Date }[];
  /** Kind "tool": the call to decide (pass it to decide()), its tool, and the turn that asked. */
  toolCallId?: string;
  toolName?: string;
  turnId?: string;
}

export interface ApprovalPage {
  approvals: PendingApproval[];
  nextCursor: string | null;
}
