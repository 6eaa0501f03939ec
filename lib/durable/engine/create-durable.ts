import { randomUUID } from "node:crypto";
import type { z } from "zod";
import type { AnyKysely } from "../drivers/connect";
import { toMs } from "../duration";
import { InvalidInputError, RunNotFoundError, RunStateConflictError, WorkflowNotFoundError } from "../errors";
import { resolveSecret } from "../auth/secrets";
import { statusTokenFor } from "../auth/status-token";
import { DEFAULT_MAX_RESULT_BYTES, toJsonText } from "../json";
import { isStorableName, storableName } from "../names";
import { type RunStatus, type RunStatusValue, runStatusValues, type RunSummary, type TickReport } from "../schemas";
import {
  cancelRun,
  type ClaimedRun,
  type ClaimRequest,
  claimDueRun,
  countDueRuns,
  deliverSignal,
  type DurableDb,
  findRunWorkflow,
  findSingletonHolder,
  failUnknownVersions,
  insertRun,
  listRuns,
  migrate,
  readRun,
  readEvents,
  readStream,
  type RunEvent,
  retryRun,
  shiftClock,
  type StreamChunk,
} from "../store";
import type { AnyWorkflow, Duration, OutputOf, SignalName, SignalPayload, SignalSchemas, SignalsOf } from "../types";
import { type AdvanceOutcome, advanceClaimedRun, type ClaimChain } from "./advance";
import { registerWorkflows, storedVersion, versionKey } from "./define-workflow";
import { countAdvanced, emptyTickReport, runLoops } from "./loops";
import { type CompactReport, createCompactor, type RetentionOptions } from "./retention";
import { createScheduler, type ScheduleInfo } from "./schedules";
import { withInvocationSpan } from "./tracing";
import { runWorker, type WorkOptions, type WorkReport } from "./worker";
import type { ExecutionSettings, StepMockLookup } from "./execution";
import { failpoint } from "./failpoints";
import { toRunStatus, toRunSummary } from "./run-status";
import { validateSignal } from "./validate-signal";

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
  /** Secrets; each defaults to its environment variable (README, "Deploying to Vercel"). */
  secrets?: { durable?: string; cron?: string; signal?: string };
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
   * How many claimed runs one `tick()` advances at once (1–64, default 1): steps that wait on I/O
   * overlap. Each holds a database connection only while it writes (README, "Scaling out").
   */
  tickConcurrency?: number;
  /**
   * Deletes what finished long ago, a bounded slice per tick (README, "Retention"): step rows,
   * signals and stream chunks of terminal runs (`steps`), terminal run rows (`runs`), events
   * (`events`). Never anything of a run that is not terminal. Default: keep everything.
   */
  retention?: RetentionOptions;
  /**
   * What happens to a due run of a registered name whose version this instance does not have:
   * `"wait"` (default) leaves it due for a deployment that has it; `"fail"` fails it, with an
   * error naming the version, at the next tick (README, "Versions").
   */
  unknownVersion?: "wait" | "fail";
  /** Where engine warnings go (console.warn). */
  log?: (message: string) => void;
}

export interface StartResult {
  id: string;
  /** False when a run with this id already existed: start is idempotent on the id, forever. */
  created: boolean;
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

export interface ListOptions {
  status?: RunStatusValue;
  workflow?: string;
  /** 1–200, default 50. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

export interface ListPage {
  runs: RunSummary[];
  nextCursor: string | null;
}

export interface Durable {
  migrate(): Promise<string[]>;
  start<W extends AnyWorkflow>(
    workflow: W,
    input: z.input<W["input"]>,
    options?: { id?: string },
  ): Promise<StartResult>;
  /** The run's status, healing it when its lease ran out; null when there is no such run. */
  status(id: string): Promise<RunStatus | null>;
  /** As `status(id)`, with `output` typed by the workflow; a run of another workflow is a RunStateConflictError. */
  status<W extends AnyWorkflow>(id: string, options: { workflow: W }): Promise<RunStatus<OutputOf<W>> | null>;
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
  list(options?: ListOptions): Promise<ListPage>;
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
  /** The registered schedules and their next slots. */
  schedules(): Promise<ScheduleInfo[]>;
  /**
   * The run's events (heals, budget yields, refused writes, outcome conflicts, cancels, retries …),
   * oldest first, at most `limit` (default 200, at most 1,000) after event id `after`.
   */
  events(runId: string, options?: { after?: number; limit?: number }): Promise<RunEvent[]>;
  /** Applies `retention` now, up to `limit` rows of each kind (default 1,000): for a script or a cron of its own. */
  compact(options?: { limit?: number }): Promise<CompactReport>;
  advance(id: string, options?: { budgetMs?: number }): Promise<AdvanceOutcome | null>;
  /**
   * Delivers a signal into the run's mailbox: it queues behind earlier deliveries of its name, and
   * the next wait on that name takes it. A delivery id seen before is a repeat and stores nothing.
   */
  signal(signal: SignalInput): Promise<SignalResult>;
  signal<W extends AnyWorkflow, K extends SignalName<SignalsOf<W>>>(
    signal: TypedSignalInput<W, K>,
  ): Promise<SignalResult>;
  /** Cancels a run that is not terminal; its owner's abortSignal fires at its next write. */
  cancel(id: string, reason?: string): Promise<RunStatus>;
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

/**
 * Creates the durable instance of an app: the workflows it runs and the database it runs them on.
 *
 * @example
 * const durable = createDurable({ db: await connect(), workflows: [approval] });
 * await durable.migrate();
 * const { id } = await durable.start(approval, { docId: "d-1" }, { id: "doc-1" });
 * await durable.tick({ budgetMs: 55_000 });
 */
export function createDurable(options: DurableOptions): Durable {
  // The store sees only the durable_* tables of the app's database.
  const db: DurableDb = options.db;
  const registry = registerWorkflows(options.workflows);
  // By name, the newest version: what start() starts and what `durable.workflows` shows.
  const workflows = registry.newest;
  const names = [...workflows.keys()];
  const unknownVersion = options.unknownVersion ?? "wait";
  if (unknownVersion !== "wait" && unknownVersion !== "fail") {
    throw new InvalidInputError('unknownVersion is "wait" or "fail"');
  }
  /** Whether this instance registered the run's (workflow, version). */
  const registered = (run: { workflow: string; version: string | null }) =>
    registry.byVersion.has(versionKey(run.workflow, run.version));
  const defaults = options.defaults ?? {};
  const leaseMs = toMs(defaults.lease ?? "30s", "defaults.lease");
  const marginMs = toMs(defaults.margin ?? "1s", "defaults.margin");
  const budgetMs = toMs(defaults.budget ?? "55s", "defaults.budget");
  const log = options.log ?? ((message: string) => console.warn(`[durable] ${message}`));
  const tickConcurrency = loopCount(options.tickConcurrency ?? 1, "tickConcurrency");
  // The concurrency limit of each workflow that has one, as every claim passes it.
  const limits: Record<string, number> = {};
  for (const workflow of workflows.values()) {
    if (workflow.concurrency) limits[workflow.name] = workflow.concurrency.limit;
  }
  // Skipped sleeps and mocked steps change what a run does: only an instance made for tests may.
  if ((options.skipSleeps || options.mockStep) && options.testing !== true) {
    throw new InvalidInputError(
      "skipSleeps and mockStep change what a run does; they work only on an instance made with " +
        "createDurable({ testing: true }) (createTestDurable makes one)",
    );
  }
  const settings: ExecutionSettings = {
    db,
    leaseMs,
    marginMs,
    maxResultBytes: defaults.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
    inProcessWaitMs: toMs(defaults.inProcessWait ?? "5s", "defaults.inProcessWait"),
    budgetMs,
    log,
    skipSleeps: options.skipSleeps === true,
    mockStep: options.mockStep,
  };
  // Under vitest NODE_ENV is "test"; anywhere else the clock moves only on an instance made for it.
  const testing = options.testing ?? process.env.NODE_ENV === "test";
  let warnedSmallBudget = false;
  let closed = false;
  const closing = new AbortController();
  const open = () => {
    if (closed) throw new RunStateConflictError("this durable instance is closed");
  };

  /**
   * Claims a due run (or exactly `runId`) and advances it inside the budget. Once `release`
   * aborts, the run is given back at its next step (a worker stopping). `carried`: a run the
   * previous run's completion already claimed for this loop (its chained claim), advanced without
   * a claim of its own; `chain`: the loop claims again afterwards, so this run's completion may
   * claim for it.
   */
  async function claimAndAdvance(
    deadline: number,
    budget: number,
    request: {
      runId?: string;
      exclude?: readonly string[];
      release?: AbortSignal;
      onClaimed?: () => void;
      carried?: ClaimedRun | null;
      chain?: ClaimChain;
    } = {},
  ) {
    const remaining = deadline - performance.now();
    // The lease covers the invocation's deadline plus the margin (docs/rules.md, rule 11a).
    const claim =
      request.carried ??
      (await claimDueRun(db, {
        workflows: names,
        versions: registry.versions,
        runId: request.runId,
        leaseMs: remaining + marginMs,
        exclude: request.exclude,
        limits,
      }));
    if (!claim) return null;
    request.onClaimed?.();
    await failpoint("claim.after");
    // The run replays on the version it started with.
    const workflow = registry.byVersion.get(versionKey(claim.run.workflow, claim.run.version))!;
    const outcome = await advanceClaimedRun(
      settings,
      workflow,
      claim,
      deadline,
      budget,
      request.release,
      request.chain,
    );
    return { claim, outcome };
  }

  /** The claim a loop chains onto a completion (docs/decisions.md, "Chained claims"). */
  function nextClaim(leaseMs: number, exclude: readonly string[] = []): ClaimRequest {
    return { workflows: names, versions: registry.versions, leaseMs, exclude, limits };
  }

  /** Computes a run's concurrency or singleton key from its parsed input: a storable string. */
  function keyOf(workflow: AnyWorkflow, option: "concurrency" | "singleton", input: unknown): string | null {
    const keyFn = workflow[option]?.key as ((input: unknown) => unknown) | undefined;
    if (!keyFn) return null;
    const key = keyFn(input);
    if (typeof key !== "string" || !isStorableName(key)) {
      throw new InvalidInputError(
        `workflow "${workflow.name}": ${option}.key must return a string of 1 to 255 characters without NUL`,
      );
    }
    return key;
  }

  const compactor = createCompactor({ db, retention: options.retention, log });

  const scheduler = createScheduler({
    db,
    workflows,
    start: (workflow, input, id) => durable.start(workflow, input as never, { id }),
    log,
  });

  /** One tick (see `Durable.tick`): due schedule slots, then up to `concurrency` claim loops, then retention. */
  async function tick(tickOptions: { budgetMs?: number; concurrency?: number }): Promise<TickReport> {
    open();
    const budget = tickOptions.budgetMs ?? budgetMs;
    const concurrency = loopCount(tickOptions.concurrency ?? tickConcurrency, "concurrency");
    const deadline = performance.now() + budget;
    const report: TickReport = emptyTickReport();
    try {
      report.scheduled = (await scheduler.startDue()).length;
    } catch (error) {
      // A schedule that cannot start must not stop the runs already due from advancing.
      const warning = `starting due schedule slots failed: ${(error as Error)?.message ?? error}`;
      report.warnings.push(warning);
      log(warning);
    }
    // A budget that cannot fit the default lease plus the margin claims nothing: say so, once
    // in the log and in every such report, rather than tick silently (docs/rules.md, rule 11).
    if (budget < leaseMs + marginMs) {
      const warning =
        `a tick budget of ${Math.round(budget)} ms claims nothing: it must fit the default lease ` +
        `(${leaseMs} ms) plus the margin (${marginMs} ms); raise maxDuration or lower defaults.lease`;
      report.warnings.push(warning);
      if (!warnedSmallBudget) log(warning);
      warnedSmallBudget = true;
    }
    if (unknownVersion === "fail") report.failed += (await failUnknownVersions(db, registry.versions, 100)).length;
    // Runs given back by this tick are not claimed again by it, by any of its loops.
    const yielded: string[] = [];
    // Stop claiming once what is left cannot fit the default lease plus the margin (rule 11).
    const fits = () => deadline - performance.now() >= leaseMs + marginMs;
    await runLoops(concurrency, async () => {
      let carried: ClaimedRun | null = null;
      // A run the last completion claimed is advanced whatever is left: it holds its lease.
      while (carried || fits()) {
        const chain: ClaimChain = {
          request: () => (fits() ? nextClaim(deadline - performance.now() + marginMs, yielded) : null),
        };
        const advanced = await claimAndAdvance(deadline, budget, { exclude: yielded, carried, chain });
        if (!advanced) return;
        countAdvanced(report, advanced);
        if (advanced.outcome === "yielded") yielded.push(advanced.claim.run.id);
        if (chain.claimed === null) return; // the completion's claim found nothing due
        carried = chain.claimed ?? null;
      }
    });
    // What is left of the budget goes to retention, in a bounded slice (README, "Retention").
    try {
      const compacted = await compactor.slice();
      if (compacted) report.compacted = compacted.runsCompacted + compacted.runsDeleted + compacted.eventsDeleted;
    } catch (error) {
      const warning = `retention failed: ${(error as Error)?.message ?? error}`;
      report.warnings.push(warning);
      log(warning);
    }
    report.budgetLeftMs = Math.max(0, Math.round(deadline - performance.now()));
    return report;
  }

  // A named object, not `this`: methods keep working when a caller destructures them.
  const durable: Durable = {
    db: options.db,
    workflows,
    tickConcurrency,

    migrate: () => migrate(db),

    async start(workflow, input, startOptions = {}) {
      open();
      if (registry.byVersion.get(versionKey(workflow.name, storedVersion(workflow.version))) !== workflow) {
        throw new WorkflowNotFoundError(workflow.name);
      }
      // Whichever version the caller names, a new run starts on the newest.
      workflow = workflows.get(workflow.name)! as typeof workflow;
      const id = storableName(startOptions.id ?? randomUUID(), "a run id");
      const parsed = workflow.input.safeParse(input);
      if (!parsed.success) {
        throw new InvalidInputError(`the input of workflow "${workflow.name}" is invalid`, {
          issues: parsed.error.issues,
        });
      }
      const inputJson = toJsonText(parsed.data, { limit: settings.maxResultBytes });
      const singletonKey = keyOf(workflow, "singleton", parsed.data);
      const row = await insertRun(db, {
        id,
        workflow: workflow.name,
        inputJson,
        version: storedVersion(workflow.version),
        concurrencyKey: keyOf(workflow, "concurrency", parsed.data),
        singletonKey,
      });
      if (row.activeRunId !== undefined) {
        throw new RunStateConflictError(
          `workflow "${workflow.name}" already has an active run for singleton key "${singletonKey}": ` +
            `"${row.activeRunId}"; start another when it has finished`,
          { activeRunId: row.activeRunId },
        );
      }
      if (row.workflow !== workflow.name) {
        throw new RunStateConflictError(`run "${id}" already exists under workflow "${row.workflow}"`);
      }
      if (!row.sameInput) {
        throw new RunStateConflictError(`run "${id}" already exists with another input; start it under a new id`);
      }
      // The token is derived when read, so a caller that never reads it (a script, a test) never
      // needs DURABLE_SECRET, nor hears that it is unset.
      return {
        id,
        created: row.created,
        get statusToken() {
          return durable.statusToken(id);
        },
      };
    },

    async status(id: string, options?: { workflow: AnyWorkflow }) {
      const read = await durable.inspect(id);
      if (read && options?.workflow) expectWorkflow(id, read.status.workflow, options.workflow);
      return read?.status ?? null;
    },

    async list(listOptions = {}) {
      open();
      const limit = listOptions.limit ?? 50;
      if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
        throw new InvalidInputError("limit is an integer from 1 to 200");
      }
      if (listOptions.status !== undefined && !runStatusValues.safeParse(listOptions.status).success) {
        throw new InvalidInputError(`status is one of ${runStatusValues.options.join(", ")}`);
      }
      const page = await listRuns(db, { ...listOptions, limit });
      return {
        runs: page.runs.map((run) => toRunSummary(run, registered(run))),
        nextCursor: page.nextCursor,
      };
    },

    tick(tickOptions = {}) {
      return withInvocationSpan("tick", () => tick(tickOptions));
    },

    async work(workOptions = {}) {
      open();
      // A worker stops when its signal aborts or the instance closes, whichever comes first.
      const stops = workOptions.signal ? [workOptions.signal, closing.signal] : [closing.signal];
      return runWorker(
        {
          db,
          workflows: names,
          budgetMs,
          marginMs,
          log,
          claimAndAdvance: (deadline, budget, release, onClaimed, carried, chain) =>
            claimAndAdvance(deadline, budget, { release, onClaimed, carried, chain }),
          nextClaim: (leaseMs) => nextClaim(leaseMs),
          housekeeping: async () => {
            const started = await scheduler.startDue();
            if (unknownVersion === "fail") await failUnknownVersions(db, registry.versions, 100);
            await compactor.slice();
            return started.length;
          },
        },
        { ...workOptions, signal: AbortSignal.any(stops) },
      );
    },

    async countDue(countOptions = {}) {
      open();
      const max = countOptions.max ?? 1000;
      if (!Number.isInteger(max) || max < 1 || max > 100_000) {
        throw new InvalidInputError("max is an integer from 1 to 100000");
      }
      return countDueRuns(db, names, registry.versions, max);
    },

    schedules() {
      open();
      return scheduler.list();
    },

    async events(runId, eventOptions = {}) {
      open();
      const { after = 0, limit = 200 } = eventOptions;
      if (!Number.isSafeInteger(after) || after < 0) throw new InvalidInputError("after is a whole number >= 0");
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
        throw new InvalidInputError("limit is an integer from 1 to 1000");
      }
      if (!isStorableName(runId)) return [];
      return readEvents(db, runId, after, limit);
    },

    async compact(compactOptions = {}) {
      open();
      return compactor.compact(compactOptions);
    },

    async advance(id, advanceOptions = {}) {
      open();
      const budget = advanceOptions.budgetMs ?? budgetMs;
      const deadline = performance.now() + budget;
      if (budget < marginMs) return null;
      const advanced = await withInvocationSpan("advance", () => claimAndAdvance(deadline, budget, { runId: id }));
      return advanced?.outcome ?? null;
    },

    async inspect(id) {
      open();
      if (!isStorableName(id)) return null;
      const read = await readRun(db, id);
      if (!read) return null;
      return { status: toRunStatus(read.run, read.steps, registered(read.run)), due: read.due };
    },

    async readStream(id, streamOptions = {}) {
      open();
      const { after = 0, limit = 500 } = streamOptions;
      if (!Number.isSafeInteger(after) || after < 0) throw new InvalidInputError("after is a whole number >= 0");
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
        throw new InvalidInputError("limit is an integer from 1 to 1000");
      }
      if (!isStorableName(id)) return null;
      const read = await readStream(db, id, after, limit);
      return read.status === null ? null : { status: read.status as RunStatusValue, chunks: read.chunks };
    },

    async signal(signal: SignalInput | TypedSignalInput<AnyWorkflow, string>): Promise<SignalResult> {
      const { runId, name, payload = null, id: deliveryId, workflow: named } = signal;
      open();
      storableName(name, "a signal name");
      if (deliveryId !== undefined) storableName(deliveryId, "a delivery id");
      if (!isStorableName(runId)) throw new RunNotFoundError(String(runId));
      const found = await findRunWorkflow(db, runId);
      if (found === null) throw new RunNotFoundError(runId);
      if (named) expectWorkflow(runId, found.workflow, named);
      // The version the run started with declares its signals.
      const definition = registry.byVersion.get(versionKey(found.workflow, found.version));
      const payloadJson = toJsonText(validateSignal(definition, name, payload), {
        limit: settings.maxResultBytes,
      });
      const outcome = await deliverSignal(db, { runId, name, payloadJson, deliveryId: deliveryId ?? null });
      switch (outcome) {
        case "not_found":
          throw new RunNotFoundError(runId);
        case "terminal":
          throw new RunStateConflictError(`run "${runId}" is finished; it takes no more signals`);
        case "repeat":
          return { ok: true, signalled: false, alreadyDelivered: true };
        default:
          return { ok: true, signalled: true, alreadyDelivered: false };
      }
    },

    async cancel(id, reason) {
      open();
      if (!isStorableName(id)) throw new RunNotFoundError(String(id));
      if (reason !== undefined && (typeof reason !== "string" || reason.includes("\u0000") || reason.length > 1000)) {
        throw new InvalidInputError("a cancel reason is a string of at most 1000 characters, without NUL");
      }
      const outcome = await cancelRun(db, id, reason ?? null);
      if (outcome === "not_found") throw new RunNotFoundError(id);
      if (outcome === "terminal") throw new RunStateConflictError(`run "${id}" is already finished`);
      return (await durable.status(id))!;
    },

    async retry(id) {
      open();
      if (!isStorableName(id)) throw new RunNotFoundError(String(id));
      const outcome = await retryRun(db, id);
      if (outcome === "not_found") throw new RunNotFoundError(id);
      if (outcome === "compacted") {
        throw new RunStateConflictError(
          `run "${id}" cannot be retried: retention deleted its receipts, ` +
            "so it would start over and repeat its effects",
        );
      }
      if (outcome === "singleton_held") {
        const { run } = (await readRun(db, id))!;
        const holder = await findSingletonHolder(db, run.workflow, run.singletonKey!);
        throw new RunStateConflictError(
          `run "${id}" cannot be retried while run "${holder}" holds its singleton key; ` +
            "retry it when that one has finished",
          holder ? { activeRunId: holder } : undefined,
        );
      }
      if (outcome === "not_failed") {
        throw new RunStateConflictError(`run "${id}" has not failed; only a failed run can be retried`);
      }
      return (await durable.status(id))!;
    },

    statusToken(id) {
      return statusTokenFor(resolveSecret("durable", options.secrets?.durable, log), id);
    },

    async close() {
      if (closed) return;
      closed = true;
      closing.abort();
      await db.destroy();
    },

    testing: {
      async advanceClock(duration) {
        if (!testing) {
          throw new RunStateConflictError(
            "testing.advanceClock moves the database clock every lease is measured on; it works only " +
              "under NODE_ENV=test or on an instance made with createDurable({ testing: true })",
          );
        }
        await shiftClock(db, toMs(duration, "advanceClock"));
      },
    },
  };
  return durable;
}

export type {
  AdvanceOutcome,
  CompactReport,
  RetentionOptions,
  RunEvent,
  ScheduleInfo,
  SignalSchemas,
  WorkOptions,
  WorkReport,
};

/** A number of concurrent loops: a whole number from 1 to 64. */
function loopCount(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1 || value > 64) {
    throw new InvalidInputError(`${name} is a whole number from 1 to 64`);
  }
  return value;
}

/** A typed call named a workflow: the run must belong to it. */
function expectWorkflow(runId: string, stored: string, named: AnyWorkflow): void {
  if (stored !== named.name) {
    throw new RunStateConflictError(`run "${runId}" belongs to workflow "${stored}", not "${named.name}"`);
  }
}
