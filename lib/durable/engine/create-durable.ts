// How engine/ works (docs/layout.md has the whole map and the path of a tick):
//
// `createDurable` resolves its options once into a `DurableInstance` (instance.ts): the database,
// the registry of workflows and versions, the settings, the scheduler and the compactor, the
// closing signal. Every command is a function that takes that instance first, one module per group:
//   start.ts              start(), startMany() and status tokens
//   callbacks.ts          completeCallback()
//   run-callbacks.ts      callbacks(): a run's callback URLs, for the dashboard
//   signal.ts             signal()
//   approvals.ts          approvals(), decide(): the waits a person decides
//   control.ts            cancel(), retry(), compact()
//   operations.ts         cancelMany(), retryMany(), fork()
//   reencrypt.ts          reencrypt(): stored payloads under the newest key
//   reads.ts              status(), inspect(), list(), events(), readStream(), countDue(), schedules()
//   metrics.ts            metrics() (meter.ts: the same figures as OpenTelemetry gauges)
//   tick.ts               tick(): schedules, claim loops, retention
//   work.ts → worker.ts   work(): worker mode
//   claim-and-advance.ts  one claim and one pass, shared by tick, work and advance()
// Below them, advance.ts runs one pass over a claimed run (execution.ts, step-recorder.ts and
// steps/). The facade here only forwards: each method is one call. The public types are in
// durable-api.ts, re-exported from here where index.ts and testing.ts import them.
import { setPreparedStatements } from "../drivers/connect";
import { InvalidInputError } from "../errors";
import { migrate } from "../store";
import type { AnyWorkflow } from "../types";
import { advanceById } from "./claim-and-advance";
import { completeCallback } from "./callbacks";
import { listRunCallbacks } from "./run-callbacks";
import { cancelById, compactNow, retryById } from "./control";
import type { CancelOptions, Durable, DurableOptions, SignalInput, WingMethods } from "./durable-api";
import { advanceClock, assertOpen, closeInstance, resolveInstance } from "./instance";
import { cancelManyRuns, forkRunFrom, retryManyRuns } from "./operations";
import { notePayloadCodec } from "./payloads";
import { publish } from "./publish";
import { reencryptRuns } from "./reencrypt";
import { readDurableMetrics } from "./metrics";
import { observeMetrics } from "./meter";
import { countDue, inspectRun, listEvents, listRunPage, listSchedules, readRunStream, readStatus } from "./reads";
import { sendSignal } from "./signal";
import { decide, listPendingApprovals } from "./approvals";
import { startManyRuns, startRun, statusTokenOf } from "./start";
import { tickOnce } from "./tick";
import { workUntilStopped } from "./work";
import { withWingMethods } from "./wings";

export type {
  BulkOptions,
  BulkResult,
  ForkOptions,
  RunFilterOptions,
  CallbackResult,
  CancelOptions,
  Durable,
  DurableDefaults,
  DurableOptions,
  ListOptions,
  ListPage,
  RunCallback,
  SignalInput,
  SignalResult,
  StartOptions,
  StartResult,
  TypedSignalInput,
} from "./durable-api";
export type { AdvanceOutcome } from "./run/advance";
export type { CompactReport, RetentionOptions } from "./retention";
export type { ScheduleInfo } from "./schedules";
export type { RunEvent } from "../store";
export type { SignalSchemas } from "../types";
export type { WorkOptions, WorkReport } from "./worker";

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
  applyPreparedStatements(options);
  const instance = resolveInstance(options, (self, workflow, input, id) =>
    startRun(self, workflow, input as never, { id }),
  );
  // A named object, not `this`: methods keep working when a caller destructures them. The wings'
  // methods are added to it (engine/wings.ts).
  const facade: Omit<Durable, keyof WingMethods> = {
    db: options.db,
    workflows: instance.workflows,
    tickConcurrency: instance.tickConcurrency,
    migrate: () => migrate(instance.db),
    start: (workflow, input, startOptions) => startRun(instance, workflow, input, startOptions),
    startMany: (workflow, inputs, startOptions) => startManyRuns(instance, workflow, inputs, startOptions),
    publish: (name, data, publishOptions) => publish(instance, name, data, publishOptions),
    completeCallback: (token, payload, callbackOptions) => completeCallback(instance, token, payload, callbackOptions),
    callbacks: (runId) => listRunCallbacks(instance, runId),
    status: ((id: string, statusOptions?: { workflow?: AnyWorkflow; ledger?: boolean }) =>
      readStatus(instance, id, statusOptions)) as Durable["status"],
    inspect: (id) => inspectRun(instance, id),
    list: (listOptions) => listRunPage(instance, listOptions),
    cancelMany: (filter, bulkOptions) => cancelManyRuns(instance, filter, bulkOptions),
    retryMany: (filter) => retryManyRuns(instance, filter),
    fork: (id, forkOptions) => forkRunFrom(instance, id, forkOptions),
    reencrypt: (filter, reencryptOptions) => reencryptRuns(instance, filter, reencryptOptions),
    readStream: (id, streamOptions) => readRunStream(instance, id, streamOptions),
    events: (runId, eventOptions) => listEvents(instance, runId, eventOptions),
    countDue: (countOptions) => countDue(instance, countOptions),
    metrics: () => readDurableMetrics(instance),
    schedules: () => listSchedules(instance),
    tick: (tickOptions) => tickOnce(instance, tickOptions),
    work: (workOptions) => workUntilStopped(instance, workOptions),
    advance: (id, advanceOptions) => advanceById(instance, id, advanceOptions),
    signal: ((signal: SignalInput) => sendSignal(instance, signal)) as Durable["signal"],
    approvals: (approvalOptions) => listPendingApprovals(instance, approvalOptions),
    decide: (decision) => decide(instance, decision),
    cancel: ((id: string, reasonOrOptions?: string | CancelOptions) =>
      cancelById(instance, id, reasonOrOptions)) as Durable["cancel"],
    retry: (id) => retryById(instance, id),
    compact: (compactOptions) => compactNow(instance, compactOptions),
    statusToken: (id) => statusTokenOf(instance, id),
    close: () => closeInstance(instance),
    testing: { advanceClock: (duration) => advanceClock(instance, duration) },
  };
  // The wings that read payloads from the store open them with the instance's codec (engine/payloads.ts).
  notePayloadCodec(facade, instance.codec);
  observeMetrics(instance); // OpenTelemetry gauges, when a meter provider is registered
  return withWingMethods(facade, () => assertOpen(instance)) as Durable; // with what the wings added: WingMethods
}

/** `preparedStatements` switches the naming of the pool connect() made (drivers/prepared-statements.ts). */
function applyPreparedStatements(options: DurableOptions) {
  const value: unknown = options.preparedStatements;
  if (value === undefined) return;
  if (typeof value !== "boolean")
    throw new InvalidInputError(`preparedStatements is true or false, not a ${typeof value}`);
  setPreparedStatements(options.db, value);
}
