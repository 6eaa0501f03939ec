import { randomUUID } from "node:crypto";
import { sql, type Kysely } from "kysely";
import type { z } from "zod";
import { advanceClaimedRun, type AdvanceOutcome } from "./advance";
import { claimDueRun } from "./claim";
import { failpoint } from "./failpoints";
import { registerWorkflows, type SignalSchemas, type Workflow } from "./define-workflow";
import { toMs, type Duration } from "./duration";
import { InvalidInputError, RunNotFoundError, RunStateConflictError, WorkflowNotFoundError } from "./errors";
import type { ExecutionSettings } from "./execution";
import { DEFAULT_MAX_RESULT_BYTES, toJsonText } from "./json";
import { listRuns, type ListOptions, type ListPage } from "./list-runs";
import { migrate } from "./migrate";
import { readRun } from "./read-run";
import { toRunStatus } from "./run-status";
import type { RunStatus, TickReport } from "./schemas";
import { resolveSecret } from "./secrets";
import { statusTokenFor } from "./status-token";

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
  db: Kysely<any>;
  workflows: readonly Workflow<any, any, any>[];
  /** Secrets; each defaults to its environment variable (DESIGN.md §5). */
  secrets?: { durable?: string; cron?: string; signal?: string };
  defaults?: DurableDefaults;
  /** Where engine warnings go (console.warn). */
  log?: (message: string) => void;
}

export interface StartResult {
  id: string;
  /** False when a run with this id already existed: start is idempotent on the id, forever. */
  created: boolean;
  /** Bearer token for this run's status route. */
  statusToken: string;
}

export interface SignalInput {
  runId: string;
  name: string;
  payload?: unknown;
  /** Delivery id (a webhook-id): a delivery id seen before is answered as a repeat. */
  id?: string;
}

export interface SignalResult {
  ok: true;
  /** This call delivered it. */
  signalled: boolean;
  /** It had been delivered before (same delivery id, or the same name). */
  alreadyDelivered: boolean;
}

export interface Durable {
  migrate(): Promise<string[]>;
  start<W extends Workflow<any, any, any>>(workflow: W, input: z.input<W["input"]>, options?: { id?: string }): Promise<StartResult>;
  status(id: string): Promise<RunStatus | null>;
  list(options?: ListOptions): Promise<ListPage>;
  tick(options?: { budgetMs?: number }): Promise<TickReport>;
  advance(id: string, options?: { budgetMs?: number }): Promise<AdvanceOutcome | null>;
  /** Delivers a signal: first delivery wins; a repeated delivery id or name is a no-op. */
  signal(signal: SignalInput): Promise<SignalResult>;
  /** Cancels a run that is not terminal; its owner's abortSignal fires at its next write. */
  cancel(id: string, reason?: string): Promise<RunStatus>;
  /** Retries a failed run, keeping every completed receipt and external key. */
  retry(id: string): Promise<RunStatus>;
  statusToken(id: string): string;
  close(): Promise<void>;
  readonly db: Kysely<any>;
  readonly workflows: ReadonlyMap<string, Workflow<any, any, any>>;
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
  const { db } = options;
  const workflows = registerWorkflows(options.workflows);
  const names = [...workflows.keys()];
  const defaults = options.defaults ?? {};
  const leaseMs = toMs(defaults.lease ?? "30s", "defaults.lease");
  const marginMs = toMs(defaults.margin ?? "1s", "defaults.margin");
  const budgetMs = toMs(defaults.budget ?? "55s", "defaults.budget");
  const log = options.log ?? ((message: string) => console.warn(`[durable] ${message}`));
  const settings: ExecutionSettings = {
    db,
    leaseMs,
    marginMs,
    maxResultBytes: defaults.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
    inProcessWaitMs: toMs(defaults.inProcessWait ?? "5s", "defaults.inProcessWait"),
    log,
  };
  let closed = false;
  const open = () => {
    if (closed) throw new RunStateConflictError("this durable instance is closed");
  };

  /** Claims a due run (or exactly `runId`) and advances it inside the budget. */
  async function claimAndAdvance(deadline: number, runId: string | undefined, exclude: string[]) {
    const remaining = deadline - performance.now();
    // The lease covers the invocation's deadline plus the margin (rule 11a).
    const claim = await claimDueRun(db, { workflows: names, runId, leaseMs: remaining + marginMs, exclude });
    if (!claim) return null;
    await failpoint("claim.after");
    const workflow = workflows.get(claim.run.workflow)!;
    const outcome = await advanceClaimedRun(settings, workflow, claim, deadline);
    return { claim, outcome };
  }

  // A named object, not `this`: methods keep working when a caller destructures them.
  const durable: Durable = {
    db,
    workflows,

    migrate: () => migrate(db),

    async start(workflow, input, startOptions = {}) {
      open();
      if (workflows.get(workflow.name) !== workflow) throw new WorkflowNotFoundError(workflow.name);
      const id = startOptions.id ?? randomUUID();
      if (!isStorableName(id)) throw new InvalidInputError("a run id is a non-empty string of at most 255 characters, without NUL");
      const parsed = workflow.input.safeParse(input);
      if (!parsed.success) {
        throw new InvalidInputError(`the input of workflow "${workflow.name}" is invalid`, { issues: parsed.error.issues });
      }
      const inputJson = toJsonText(parsed.data, { limit: settings.maxResultBytes });
      // Insert-if-absent: the id is the caller's dedup key, forever.
      const { rows } = await sql<{ workflow: string; created: boolean }>`
        with inserted as (
          insert into durable_runs (id, workflow, input, wake_at)
          values (${id}, ${workflow.name}, ${inputJson}::jsonb, durable_now())
          on conflict (id) do nothing
          returning workflow
        )
        select workflow, true as created from inserted
        union all
        select workflow, false as created from durable_runs where id = ${id} and not exists (select 1 from inserted)`.execute(db);
      // A concurrent start of the same id committed after this statement's snapshot: read it now.
      const row = rows[0] ?? (await db.selectFrom("durable_runs").select(["workflow", sql<boolean>`false`.as("created")]).where("id", "=", id).executeTakeFirstOrThrow());
      if (row.workflow !== workflow.name) {
        throw new RunStateConflictError(`run "${id}" already exists under workflow "${row.workflow}"`);
      }
      return { id, created: row.created, statusToken: durable.statusToken(id) };
    },

    async status(id) {
      open();
      if (!isStorableName(id)) return null;
      const read = await readRun(db, id);
      if (!read) return null;
      return toRunStatus(read.run, read.steps, workflows.has(read.run.workflow));
    },

    list(listOptions) {
      open();
      return listRuns(db, listOptions, (name) => workflows.has(name));
    },

    async tick(tickOptions = {}) {
      open();
      const deadline = performance.now() + (tickOptions.budgetMs ?? budgetMs);
      const report: TickReport = { claimed: 0, completed: 0, waiting: 0, failed: 0, yielded: 0, healed: 0, budgetLeftMs: 0 };
      const yielded: string[] = [];
      // Stop claiming once what is left cannot fit the default lease plus the margin (rule 11).
      while (deadline - performance.now() >= leaseMs + marginMs) {
        const advanced = await claimAndAdvance(deadline, undefined, yielded);
        if (!advanced) break;
        report.claimed++;
        if (advanced.claim.healed) report.healed++;
        if (advanced.outcome === "completed") report.completed++;
        else if (advanced.outcome === "failed") report.failed++;
        else if (advanced.outcome === "waiting") report.waiting++;
        else if (advanced.outcome === "yielded") {
          report.yielded++;
          yielded.push(advanced.claim.run.id);
        }
      }
      report.budgetLeftMs = Math.max(0, Math.round(deadline - performance.now()));
      return report;
    },

    async advance(id, advanceOptions = {}) {
      open();
      const deadline = performance.now() + (advanceOptions.budgetMs ?? budgetMs);
      if (deadline - performance.now() < marginMs) return null;
      const advanced = await claimAndAdvance(deadline, id, []);
      return advanced?.outcome ?? null;
    },

    async signal({ runId, name, payload = null, id: deliveryId }) {
      open();
      if (!isStorableName(name)) throw new InvalidInputError("a signal name is a non-empty string of at most 255 characters, without NUL");
      if (deliveryId !== undefined && !isStorableName(deliveryId)) {
        throw new InvalidInputError("a delivery id is a non-empty string of at most 255 characters, without NUL");
      }
      if (!isStorableName(runId)) throw new RunNotFoundError(String(runId));
      const run = await db.selectFrom("durable_runs").select("workflow").where("id", "=", runId).executeTakeFirst();
      if (!run) throw new RunNotFoundError(runId);
      const payloadJson = toJsonText(validateSignal(workflows.get(run.workflow), name, payload), { limit: settings.maxResultBytes });
      const { rows } = await sql<{ outcome: string }>`
        select durable_deliver_signal(${runId}, ${name}, ${payloadJson}::jsonb, ${deliveryId ?? null}) as outcome`.execute(db);
      switch (rows[0]!.outcome) {
        case "not_found":
          throw new RunNotFoundError(runId);
        case "terminal":
          throw new RunStateConflictError(`run "${runId}" is finished; it takes no more signals`);
        case "timed_out":
          throw new RunStateConflictError(`run "${runId}" stopped waiting for "${name}" (its deadline passed)`);
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
      const { rows } = await sql<{ outcome: string }>`select durable_cancel_run(${id}, ${reason ?? null}) as outcome`.execute(db);
      if (rows[0]!.outcome === "not_found") throw new RunNotFoundError(id);
      if (rows[0]!.outcome === "terminal") throw new RunStateConflictError(`run "${id}" is already finished`);
      return (await durable.status(id))!;
    },

    async retry(id) {
      open();
      if (!isStorableName(id)) throw new RunNotFoundError(String(id));
      const { rows } = await sql<{ outcome: string }>`select durable_retry_run(${id}) as outcome`.execute(db);
      if (rows[0]!.outcome === "not_found") throw new RunNotFoundError(id);
      if (rows[0]!.outcome === "not_failed") throw new RunStateConflictError(`run "${id}" has not failed; only a failed run can be retried`);
      return (await durable.status(id))!;
    },

    statusToken(id) {
      return statusTokenFor(resolveSecret("durable", options.secrets?.durable, log), id);
    },

    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },

    testing: {
      async advanceClock(duration) {
        const ms = toMs(duration, "advanceClock");
        await sql`update durable_clock set shift = shift + ${ms}::bigint * interval '1 millisecond'`.execute(db);
      },
    },
  };
  return durable;
}

export type { AdvanceOutcome, SignalSchemas };

/**
 * A workflow that declares signals refuses other names and validates payloads (rule 16); one that
 * declares none, or one this deployment does not know, accepts any name as it is.
 */
function validateSignal(workflow: Workflow<any, any, any> | undefined, name: string, payload: unknown): unknown {
  const schemas = workflow?.signals as SignalSchemas | undefined;
  if (!schemas || Object.keys(schemas).length === 0) return payload;
  const schema = Object.prototype.hasOwnProperty.call(schemas, name) ? schemas[name] : undefined;
  if (!schema) throw new InvalidInputError(`workflow "${workflow!.name}" takes no signal "${name}" (it takes ${Object.keys(schemas).join(", ")})`);
  const parsed = schema.safeParse(payload);
  if (!parsed.success) throw new InvalidInputError(`the payload of signal "${name}" is invalid`, { issues: parsed.error.issues });
  return parsed.data;
}

/** Ids and names are text columns of at most 255 characters; Postgres text refuses NUL. */
function isStorableName(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= 255 && !value.includes("\u0000");
}
