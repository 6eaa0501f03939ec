// The instance object: `createDurable`'s options resolved once, validated here, and handed to every
// command module as its first argument (start.ts, signal.ts, control.ts, reads.ts, tick.ts, work.ts,
// claim-and-advance.ts). Nothing else keeps state between calls: the closing signal and the
// once-only warning live here too.
import { MAX_CLOCK_MS, toBoundedMs } from "../duration";
import { ENCRYPTION_KEYS_VARIABLE, parseEncryptionKeys } from "../encryption/keys";
import { createPayloadCodec, type PayloadCodec } from "../encryption/payload-codec";
import { InvalidInputError, RunStateConflictError } from "../errors";
import { DEFAULT_MAX_RESULT_BYTES } from "../json";
import { type DurableDb, shiftClock } from "../store";
import type { AnyWorkflow, Duration } from "../types";
import { checkRange } from "./check-range";
import { createComposeSupport } from "./compose-support";
import { type RateLimitParameter, rateLimitsOf } from "./flow-control";
import { registerWorkflows, versionKey, type WorkflowRegistry } from "./define-workflow";
import type { DurableOptions } from "./durable-api";
import type { ExecutionSettings } from "./run/execution";
import { type Compactor, createCompactor } from "./retention";
import { createScheduler, type Scheduler } from "./schedules";
import { followupsByWorkflow } from "./lifecycle";
import { resolveWebhooks, webhookDeliveryWorkflow } from "./webhooks";

export interface DurableInstance {
  /** The store sees only the durable_* tables of the app's database. */
  readonly db: DurableDb;
  /** Every registered (workflow, version): a run replays on the version it started with. */
  readonly registry: WorkflowRegistry;
  /** By name, the newest version: what start() starts and what `durable.workflows` shows. */
  readonly workflows: ReadonlyMap<string, AnyWorkflow>;
  /** The registered names, as every claim passes them. */
  readonly names: readonly string[];
  /** The concurrency limit of each workflow that has one, as every claim passes it. */
  readonly limits: Readonly<Record<string, number>>;
  /** The rate limit of each workflow that has one, as every claim passes it (0010). */
  readonly rates: Readonly<Record<string, RateLimitParameter>>;
  /** Lease, margin, budget, result limit, in-process waits, log, and the testing-only switches. */
  readonly settings: ExecutionSettings;
  readonly tickConcurrency: number;
  readonly unknownVersion: "wait" | "fail";
  /** Whether `testing.advanceClock` may move the database clock. */
  readonly testing: boolean;
  readonly secrets: DurableOptions["secrets"];
  /** Seals payloads as they are written and opens them as they are read (docs/guide/encryption.md). */
  readonly codec: PayloadCodec;
  readonly log: (message: string) => void;
  readonly scheduler: Scheduler;
  readonly compactor: Compactor;
  /** Aborts on close(): a worker stops with the instance. */
  readonly closing: AbortController;
  /**
   * The monotonic clock invocation deadlines are measured on (performance.now()). Leases are
   * measured on the database clock, durable_now(), which only `testing.advanceClock` moves.
   */
  readonly now: () => number;
  readonly state: {
    closed: boolean;
    warnedSmallBudget: boolean;
    /** When (on `now`) this instance last released runs held under a changed rate limit; null: never. */
    rateHoldsSweptAt: number | null;
  };
}

/** How the scheduler starts a slot's run: `start()` with the slot's id (start.ts). */
export type StartSlot = (
  instance: DurableInstance,
  workflow: AnyWorkflow,
  input: unknown,
  id: string,
) => Promise<unknown>;

/** Resolves and validates `options` once: a mistake is refused at creation, not at the first tick. */
export function resolveInstance(options: DurableOptions, startSlot: StartSlot): DurableInstance {
  const db: DurableDb = options.db;
  const webhooks = resolveWebhooks(options.webhooks);
  const registry = registerWorkflows(
    webhooks.length > 0 ? [...options.workflows, webhookDeliveryWorkflow(webhooks)] : options.workflows,
  );
  registry.followups = followupsByWorkflow(registry, webhooks);
  const workflows = registry.newest;
  const unknownVersion = options.unknownVersion ?? "wait";
  if (unknownVersion !== "wait" && unknownVersion !== "fail") {
    throw new InvalidInputError('unknownVersion is "wait" or "fail"');
  }
  const log = options.log ?? ((message: string) => console.warn(`[durable] ${message}`));
  const resolved = resolveSettings(options, db, log);
  const settings: ExecutionSettings = {
    ...resolved,
    compose: createComposeSupport({
      registry,
      maxResultBytes: options.defaults?.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
      secret: options.secrets?.durable,
      baseUrl: options.baseUrl,
      log,
      codec: resolved.codec,
    }),
  };
  const tickConcurrency = checkRange("tickConcurrency", options.tickConcurrency ?? 1, 1, 64, "whole number");
  const limits: Record<string, number> = {};
  for (const workflow of workflows.values()) {
    if (workflow.concurrency) limits[workflow.name] = workflow.concurrency.limit;
  }
  const instance: DurableInstance = {
    db,
    registry,
    workflows,
    names: [...workflows.keys()],
    limits,
    rates: rateLimitsOf(workflows.values()),
    settings,
    tickConcurrency,
    unknownVersion,
    // Under vitest NODE_ENV is "test"; anywhere else the clock moves only on an instance made for it.
    testing: options.testing ?? process.env.NODE_ENV === "test",
    secrets: options.secrets,
    codec: settings.codec,
    log,
    compactor: createCompactor({ db, retention: options.retention, log }),
    scheduler: createScheduler({
      db,
      workflows,
      start: (workflow, input, id) => startSlot(instance, workflow, input, id),
      log,
    }),
    closing: new AbortController(),
    now: () => performance.now(),
    state: { closed: false, warnedSmallBudget: false, rateHoldsSweptAt: null },
  };
  return instance;
}

/** The settings every execution reads (engine/run/execution.ts), from `defaults` and the testing switches. */
function resolveSettings(options: DurableOptions, db: DurableDb, log: (message: string) => void): ExecutionSettings {
  // Skipped sleeps and mocked steps change what a run does: only an instance made for tests may.
  if ((options.skipSleeps || options.mockStep || options.observeStep) && options.testing !== true) {
    throw new InvalidInputError(
      "skipSleeps, mockStep and observeStep change what a run does; they work only on an instance made with " +
        "createDurable({ testing: true }) (createTestDurable makes one)",
    );
  }
  const defaults = options.defaults ?? {};
  return {
    db,
    leaseMs: toBoundedMs(defaults.lease ?? "30s", "defaults.lease"),
    marginMs: toBoundedMs(defaults.margin ?? "1s", "defaults.margin"),
    maxResultBytes: defaults.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
    inProcessWaitMs: toBoundedMs(defaults.inProcessWait ?? "5s", "defaults.inProcessWait"),
    budgetMs: toBoundedMs(defaults.budget ?? "55s", "defaults.budget"),
    log,
    codec: codecOf(options.encryption),
    skipSleeps: options.skipSleeps === true,
    mockStep: options.mockStep,
    observeStep: options.observeStep,
  };
}

/** The payload codec of `encryption`, else of `DURABLE_ENCRYPTION_KEYS` when set, else the plain one. */
function codecOf(encryption: DurableOptions["encryption"]): PayloadCodec {
  const fromEnv = process.env[ENCRYPTION_KEYS_VARIABLE]?.trim();
  if (encryption === undefined && fromEnv) return createPayloadCodec({ keys: parseEncryptionKeys(fromEnv) });
  return createPayloadCodec(encryption);
}

/** Refuses a call on a closed instance. */
export function assertOpen(instance: DurableInstance): void {
  if (instance.state.closed) throw new RunStateConflictError("this durable instance is closed");
}

/** Whether this instance registered the run's (workflow, version). */
export function isRegistered(instance: DurableInstance, run: { workflow: string; version: string | null }): boolean {
  return instance.registry.byVersion.has(versionKey(run.workflow, run.version));
}

/** Closes the instance once: stops its workers, then closes the database. */
export async function closeInstance(instance: DurableInstance): Promise<void> {
  if (instance.state.closed) return;
  instance.state.closed = true;
  instance.closing.abort();
  await instance.db.destroy();
}

/** `testing.advanceClock`: moves the database clock, on an instance made for tests only. */
export async function advanceClock(instance: DurableInstance, duration: Duration): Promise<void> {
  if (!instance.testing) {
    throw new RunStateConflictError(
      "testing.advanceClock moves the database clock every lease is measured on; it works only " +
        "under NODE_ENV=test or on an instance made with createDurable({ testing: true })",
    );
  }
  // Past MAX_CLOCK_MS, now + the longest duration would be a time no column holds (rule 19).
  const latest = new Date(MAX_CLOCK_MS);
  if (!(await shiftClock(instance.db, toBoundedMs(duration, "advanceClock"), latest))) {
    throw new InvalidInputError(`advanceClock: the database clock may not pass ${latest.toISOString()}`);
  }
}
