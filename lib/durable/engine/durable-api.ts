// The public types of a durable instance: its options and the API `createDurable` answers
// (create-durable.ts re-exports every name here, where index.ts and testing.ts import them).
import type { z } from "zod";
import type { ApprovalPage, ApprovalsOptions, DecideInput, DecideResult } from "./approval-types";
import type { AnyKysely } from "../drivers/connect";
import type { EncryptionOptions } from "../encryption/keys";
import type { PublishOptions, PublishResult } from "../event-types";
import type { DurableMetrics } from "../metrics-types";
import type { RunLedger, RunStatus, RunStatusValue, RunSummary, TickReport } from "../schemas";
import type { RunEvent, StreamChunk } from "../store";
import type { AnyWorkflow, Duration, OutputOf, SignalName, SignalPayload, SignalsOf } from "../types";
import type { AdvanceOutcome } from "./run/advance";
import type { ForkOptions } from "./fork-edits";
import type { StepMockLookup, StepObserver } from "./run/execution";

export type { ForkOptions };
export type { CallbackResult, RunCallback };
import type { CompactReport, RetentionOptions } from "./retention";
import type { ScheduleInfo } from "./schedules";
import type { WebhookEndpoint } from "./webhooks";
import type { WorkOptions, WorkReport } from "./worker";
import type { CallbackResult, RunCallback } from "./callback-types";

export interface DurableDefaults {
  /** Default step lease: the longest a step body may take ("30s"). */
  lease?: Duration;
  /** Kept free before an invocation's deadline, and added to the run's lease ("1s"). */
  margin?: Duration;
  /** Budget of `tick()` and `advance()` when none is given ("55s"). */
  budget?: Duration;
  /** Largest step result or run output, in bytes of JSON (1 MiB). */
  maxResultBytes?: number;
  /** Sleeps, poll intervals and retry delays up to this long are waited in process when they fit ("5s"). */
  inProcessWait?: Duration;
}

export interface DurableOptions {
  /** The app's database (`connect()`); the toolkit keeps its `durable_*` tables there. */
  db: AnyKysely;
  workflows: readonly AnyWorkflow[];
  /** Secrets; each defaults to its environment variable (docs/guide/deploying-to-vercel.md, "Deploying to Vercel"). */
  secrets?: { durable?: string; cron?: string; signal?: string };
  /**
   * Encryption at rest of run payloads (docs/guide/encryption.md): the first key that is not
   * decrypt-only seals, all open. Unset: the keys of `DURABLE_ENCRYPTION_KEYS`, if it is set.
   */
  encryption?: EncryptionOptions;
  defaults?: DurableDefaults;
  /**
   * Allows `testing.advanceClock` (default: only where NODE_ENV is "test", as under vitest). It
   * moves the clock of the whole database, so it is refused everywhere else.
   */
  testing?: boolean;
  /**
   * Testing only, with `testing: true`: `sleep` and `sleepUntil` complete at once (recorded as
   * completed sleeps) instead of waiting. `createTestDurable({ skipSleeps: true })` sets it.
   */
  skipSleeps?: boolean;
  /**
   * Testing only, with `testing: true`: the mock of a `run`, `tx` or AI step, asked before each
   * attempt; the harness's `mockStep` keeps them (lib/durable/testing.ts).
   */
  mockStep?: StepMockLookup;
  /**
   * Testing only, with `testing: true`: asked as each step is reached; an Error it answers fails
   * the run there, before the step does anything (`replayTest`, lib/durable/testing.ts).
   */
  observeStep?: StepObserver;
  /**
   * How many claimed runs one `tick()` advances at once (1–64, default 1): steps that wait on I/O
   * overlap. Each holds a database connection only while it writes (docs/guide/scaling-out.md, "Scaling out").
   */
  tickConcurrency?: number;
  /**
   * Named prepared statements for the hot path on a `connect()` handle over pg or Neon (default:
   * on, or DURABLE_PREPARED_STATEMENTS). `false` sends every statement unnamed, for a pooler that
   * refuses them (docs/guide/deploying-to-vercel.md, "Prepared statements"). A Kysely the app
   * built itself always sends unnamed statements.
   */
  preparedStatements?: boolean;
  /**
   * Deletes what finished long ago, a bounded slice per tick (docs/guide/retention.md, "Retention"): step rows,
   * signals and stream chunks of terminal runs (`steps`), terminal run rows (`runs`), events
   * (`events`). Never anything of a run that is not terminal. Default: keep everything.
   */
  retention?: RetentionOptions;
  /**
   * What happens to a due run of a registered name whose version this instance does not have:
   * `"wait"` (default) leaves it due for a deployment that has it; `"fail"` fails it, with an
   * error naming the version, at the next tick (docs/guide/versions.md, "Versions").
   */
  unknownVersion?: "wait" | "fail";
  /**
   * The origin of callback URLs (`ctx.step.callback`), e.g. "https://shop.example.com"; else
   * DURABLE_BASE_URL, else https:// + VERCEL_URL, else http://localhost:$PORT (3000).
   */
  baseUrl?: string;
  /** Where engine warnings go (console.warn). */
  log?: (message: string) => void;
  /**
   * Endpoints sent `run.completed`, `run.failed`, `run.cancelled` (and `run.waiting` when listed),
   * signed as Standard Webhooks; each delivery is a run of the built-in `durable.webhook` workflow,
   * started in the transaction that ends the run (docs/guide/lifecycle.md, "Webhooks").
   */
  webhooks?: readonly WebhookEndpoint[];
}

/** Options of `start` (and, less `id`, of `startMany`). */
export interface StartOptions {
  id?: string;
  /** How long the run may take from now; the earlier of it and the workflow's `deadline` holds. */
  deadline?: Duration;
  /** Not claimed for the first time within it, the run fails with code `expired`. */
  ttl?: Duration;
  /** An integer, higher first (default: the workflow's `priority(input)`, else 0). */
  priority?: number;
  /** Up to 10 tags of 1–64 characters, for `list({ tag })` (docs/guide/runs.md, "Tags and metadata"). */
  tags?: readonly string[];
}

/** What `cancel(id, options)` takes: a reason, and whether its children are cancelled too. */
export interface CancelOptions {
  reason?: string;
  /** "cancel" (default): its non-terminal children, and theirs, are cancelled first; "keep" leaves them. */
  children?: "cancel" | "keep";
}

export interface StartResult {
  id: string;
  /** False when a run with this id already existed: start is idempotent on the id, forever. */
  created: boolean;
  /** The workflow debounces and this start updated its key's pending run (`id` names it). */
  debounced?: true;
  /** Bearer token for this run's status route (derived from DURABLE_SECRET when first read). */
  readonly statusToken: string;
}

export interface SignalInput {
  runId: string;
  name: string;
  payload?: unknown;
  /** Delivery id (a webhook-id): a delivery id seen before is answered as a repeat. */
  id?: string;
  /** See `TypedSignalInput`: naming the workflow types the name and the payload. */
  workflow?: undefined;
}

/** A signal to a run of `W`: the name is one `W` declares, the payload its schema's input. */
export interface TypedSignalInput<W extends AnyWorkflow, K extends SignalName<SignalsOf<W>>> {
  /** The workflow the run belongs to; a run of another workflow is a RunStateConflictError. */
  workflow: W;
  runId: string;
  name: K;
  payload: SignalPayload<SignalsOf<W>, K>;
  id?: string;
}

export interface SignalResult {
  ok: true;
  /** This call delivered it. */
  signalled: boolean;
  /** It had been delivered before: a delivery id seen before for this run. */
  alreadyDelivered: boolean;
}

/**
 * Which runs `list`, `cancelMany` and `retryMany` are about; every field narrows
 * (docs/guide/runs.md, "Finding runs").
 */
export interface RunFilterOptions {
  /** One status, or any of several. */
  status?: RunStatusValue | readonly RunStatusValue[];
  workflow?: string;
  /** The workflow version the runs started on. */
  version?: string;
  /** Runs started with this tag. */
  tag?: string;
  /** Only the runs this run started (`ctx.step.invoke`, `ctx.step.start`). */
  parentId?: string;
  /**
   * Runs whose metadata contains this object (each key with this value; nested objects contain
   * likewise). At least one key; a value JSON cannot carry as written (undefined, NaN…) is refused.
   */
  metadata?: Record<string, unknown>;
  /** Created strictly after this time (a Date or ISO 8601 text). */
  createdAfter?: Date | string;
  /** Created strictly before this time. */
  createdBefore?: Date | string;
  /**
   * Runs not yet past patch `id` (docs/guide/versions.md, "Patching"): not finished, and without
   * its marker, so they may still take the old path (or reach the patch later).
   */
  beforePatch?: string;
}

/** What `cancelMany` and `retryMany` answer. */
export interface BulkResult {
  /** Runs the filter matched that the action applied to when their batch picked them. */
  matched: number;
  /** Runs this call changed; the rest of `matched` ended (or were retried) by someone else meanwhile. */
  changed: number;
}

/** Options of `cancelMany`. */
export interface BulkOptions {
  reason?: string;
  /** As `cancel`'s: "cancel" (default) cancels each run's non-terminal children too. */
  children?: "cancel" | "keep";
}

export interface ListOptions extends RunFilterOptions {
  /** 1–200, default 50. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

export interface ListPage {
  runs: RunSummary[];
  nextCursor: string | null;
}

/**
 * The methods a wing adds to the facade (engine/wings.ts), declared by the wing's augmentation of
 * this interface: the deprecated `toolApprovals(runId)` by lib/durable/ai/tool-approvals.ts.
 */
// biome-ignore lint/suspicious/noEmptyInterface: a wing's module augmentation fills it
export interface WingMethods {}

export interface Durable extends WingMethods {
  migrate(): Promise<string[]>;
  /**
   * Starts a run (idempotent on `id`). `deadline`: past it the run fails with `deadline_exceeded`
   * (the earlier of it and the workflow's own holds); `ttl`: not claimed within it, the run fails
   * with `expired`. Durations from now, on the database clock.
   */
  start<W extends AnyWorkflow>(workflow: W, input: z.input<W["input"]>, options?: StartOptions): Promise<StartResult>;
  /**
   * Starts one run per input in one statement, each idempotent on its id (`ids[i]`, default a new
   * uuid): a `StartResult` for each, in order (at most 1,000 per call).
   */
  startMany<W extends AnyWorkflow>(
    workflow: W,
    inputs: readonly z.input<W["input"]>[],
    options?: { ids?: readonly string[]; deadline?: Duration; ttl?: Duration; tags?: readonly string[] },
  ): Promise<StartResult[]>;
  /**
   * Publishes an event: inserts it and starts one run of every workflow subscribed to it (`on`),
   * with `data` as input, in one transaction (the app's, with `tx`); a repeated `id` starts nothing
   * (docs/guide/events.md).
   * @throws InvalidInputError when a subscriber's input schema refuses `data` (nothing written)
   */
  publish(name: string, data: unknown, options?: PublishOptions): Promise<PublishResult>;
  /**
   * Delivers a callback's payload from code, as `POST /api/durable/callback/{token}` does: the
   * first delivery wins; `id` (an idempotency key) makes a repeat a no-op.
   * @throws CallbackNotFoundError for a token that is malformed, forged or unknown
   * @throws RunStateConflictError once the callback resolved, timed out, or its run ended
   * @throws InvalidInputError when the payload fails the callback's schema
   */
  completeCallback(token: string, payload: unknown, options?: { id?: string }): Promise<CallbackResult>;
  /**
   * The callback URLs the run made (`ctx.step.callback`), oldest first (at most 200), each with its
   * token, derived from DURABLE_SECRET: for an admin's page or script, never for the run's end user.
   */
  callbacks(runId: string): Promise<RunCallback[]>;
  /** The run's status, healing it when its lease ran out; null when there is no such run. */
  status(id: string): Promise<RunStatus | null>;
  /** As `status(id)`, with `output` typed by the workflow; a run of another workflow is a RunStateConflictError. */
  status<W extends AnyWorkflow>(id: string, options: { workflow: W }): Promise<RunStatus<OutputOf<W>> | null>;
  /**
   * As `status(id)`, plus the run's input and every receipt's result (and seq, and stored error),
   * opened: the recorded run `replayTest` replays (docs/guide/edit-and-resume.md). For an admin:
   * it holds the run's payloads.
   */
  status(id: string, options: { ledger: true; workflow?: AnyWorkflow }): Promise<RunLedger | null>;
  /**
   * `status(id)` (healing a dead run likewise) plus whether a claim would take the run now, by the
   * database clock: what the status route asks before it spends a claim on advancing the run.
   */
  inspect(id: string): Promise<{ status: RunStatus; due: boolean } | null>;
  /**
   * The run's stream chunks after seq `after` (default 0: from the start), oldest first, at most
   * `limit` (default 500, at most 1,000), and the run's status; null when there is no such run.
   * A chunk is `broken` when its attempt did not complete (docs/model.md, "Run streams").
   */
  readStream(
    id: string,
    options?: { after?: number; limit?: number },
  ): Promise<{ status: RunStatusValue; chunks: StreamChunk[] } | null>;
  /** A page of runs, newest first, filtered (docs/guide/runs.md, "Finding runs"); `nextCursor` pages on. */
  list(options?: ListOptions): Promise<ListPage>;
  /**
   * Cancels every run the filter matches that is not terminal, in batches of 500, each run under
   * its own fence as `cancel` does (its children too unless `children: "keep"`). A filter that
   * names nothing, or has a field whose value is `undefined`, is refused (docs/guide/runs.md,
   * "Acting on many runs").
   */
  cancelMany(filter: RunFilterOptions, options?: BulkOptions): Promise<BulkResult>;
  /** Retries every failed run the filter matches, in batches of 500, each as `retry` does; filtered as cancelMany. */
  retryMany(filter: RunFilterOptions): Promise<BulkResult>;
  /**
   * A new run of the source's workflow, version and input, with the source's receipts before
   * `fromStep` (replayed, not run again) and `forkedFrom` set; the source is not changed.
   * @throws InvalidInputError for a step the run never reached
   * @throws RunStateConflictError when the source's version is not registered here, or a
   *   `ctx.step.start` or `ctx.step.callback` receipt comes before `fromStep`
   */
  fork(id: string, options: ForkOptions): Promise<StartResult>;
  /**
   * Rewrites the stored payloads of every run the filter matches (list's filter; none: every run)
   * under the newest encryption key (docs/guide/encryption.md, "Rotating keys"): each value is
   * opened and sealed again, and written only when that changed it. In batches of `batchSize`
   * runs (default 100), one transaction each, beside owners that keep running.
   * @returns the runs walked and the values rewritten
   * @throws DecryptionError naming a key that is not configured: nothing of that batch is written
   */
  reencrypt(filter?: RunFilterOptions, options?: { batchSize?: number }): Promise<{ runs: number; values: number }>;
  /**
   * Starts the runs of due schedule slots, then claims due runs and advances up to `concurrency`
   * (default: the instance's `tickConcurrency`) of them at once, until none is due or the budget
   * cannot fit another step.
   */
  tick(options?: { budgetMs?: number; concurrency?: number }): Promise<TickReport>;
  /**
   * Worker mode, for hosts that run long: claims and advances due runs, `concurrency` at once
   * (default 8), and sleeps until a run becomes due (LISTEN/NOTIFY where the driver has it, else
   * polling every `pollMs`, default 1000). Once `signal` aborts it claims nothing more, gives each
   * run it holds back at its next step, and resolves with what it did. `close()` stops it too, but
   * abort and await it first: a run is given back only while the database is open.
   */
  work(options?: WorkOptions): Promise<WorkReport>;
  /** How many runs a claim would take now, counted up to `max` (default 1,000). */
  countDue(options?: { max?: number }): Promise<number>;
  /** One scrape's figures in one statement (docs/guide/metrics.md); unregistered workflows as `null`. */
  metrics(): Promise<DurableMetrics>;
  /** The registered schedules and their next slots. */
  schedules(): Promise<ScheduleInfo[]>;
  /**
   * The run's events (heals, budget yields, refused writes, outcome conflicts, cancels, retries …),
   * oldest first, at most `limit` (default 200, at most 1,000) after event id `after`.
   */
  events(runId: string, options?: { after?: number; limit?: number }): Promise<RunEvent[]>;
  /** Applies `retention` now, up to `limit` rows of each kind (default 1,000): for a script or a cron of its own. */
  compact(options?: { limit?: number }): Promise<CompactReport>;
  /**
   * Claims exactly run `id`, if it is due, and advances it inside the budget. `children`: when it
   * parks on the child runs its suspension started (`invoke`), advance them in this call too, and
   * the run again once they woke it (the routes do, after answering).
   */
  advance(id: string, options?: { budgetMs?: number; children?: boolean }): Promise<AdvanceOutcome | null>;
  /**
   * Delivers a signal into the run's mailbox: it queues behind earlier deliveries of its name, and
   * the next wait on that name takes it. A delivery id seen before is a repeat and stores nothing.
   */
  signal(signal: SignalInput): Promise<SignalResult>;
  signal<W extends AnyWorkflow, K extends SignalName<SignalsOf<W>>>(
    signal: TypedSignalInput<W, K>,
  ): Promise<SignalResult>;
  /**
   * The waits a person decides (signals a workflow marks in `approvals`), newest run first, with
   * each run's input opened and the decisions so far (docs/guide/approvals.md).
   */
  approvals(options?: ApprovalsOptions): Promise<ApprovalPage>;
  /**
   * One person's decision on a run's approval: recorded with its actor and reason; a reject, or the
   * approval that reaches the quorum, completes the wait. Later decisions on it: RunStateConflictError (409).
   */
  decide(decision: DecideInput): Promise<DecideResult>;
  /**
   * Cancels a run that is not terminal, and its non-terminal children (and theirs) unless
   * `children: "keep"`; each owner's abortSignal fires at its next write.
   */
  cancel(id: string, reason?: string): Promise<RunStatus>;
  cancel(id: string, options: CancelOptions): Promise<RunStatus>;
  /** Retries a failed run, keeping every completed receipt and external key. */
  retry(id: string): Promise<RunStatus>;
  statusToken(id: string): string;
  close(): Promise<void>;
  readonly db: AnyKysely;
  readonly workflows: ReadonlyMap<string, AnyWorkflow>;
  /** How many claimed runs one `tick()` advances at once (option `tickConcurrency`). */
  readonly tickConcurrency: number;
  readonly testing: { advanceClock(duration: Duration): Promise<void> };
}
