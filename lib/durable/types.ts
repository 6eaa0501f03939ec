// The types every layer shares (a workflow, its context, the step API), apart from the code that implements them
// (docs/layout.md). It imports only library types and the vocabulary leaves (signal-, event- and lifecycle-types.ts).
import type { Transaction } from "kysely";
import type { z } from "zod";
import type { EventSteps, EventSubscriber } from "./event-types";
import type { Jsonified } from "./jsonified";
import type { LifecycleHooks } from "./lifecycle-types";
import type {
  CallbackSchemas,
  NoSignals,
  SignalName,
  SignalOutput,
  SignalPayload,
  SignalSchemas,
  WorkflowApprovals,
} from "./signal-types";
export type { CallbackSchemas, Jsonified, NoSignals, SignalName, SignalOutput, SignalPayload, SignalSchemas };
export type * from "./event-types";

/** A length of time: milliseconds, or a string `<number><unit>`, unit `ms | s | m | h | d` ("250ms", "7d"). */
export type Duration = number | string;

export type RunState = "pending" | "running" | "waiting" | "completed" | "failed" | "cancelled";
export type StepKind =
  | "run"
  | "tx"
  | "value"
  | "sleep"
  | "signal"
  | "poll"
  | "ai"
  /** A child run waited on (`ctx.step.invoke`). */
  | "invoke"
  /** A child run started and not waited on (`ctx.step.start`). */
  | "start"
  /** A race (`ctx.step.waitForAny`) or a wait on a callback (`ctx.step.waitForCallback`). */
  | "any"
  /** A callback URL made (`ctx.step.callback`). */
  | "callback"
  | "patch" // a patch's marker (ctx.patched)
  | "event"; // ctx.step.waitForEvent
export type StepState = "running" | "waiting" | "completed" | "failed";
/** What a waiting run waits for, as `RunStatus.waitingFor` shows it. */
export type WaitingFor = {
  /** "run": a child run (`invoke`, the first when several); "any": a race; "callback": a callback URL. */
  kind: "signal" | "sleep" | "poll" | "retry" | "run" | "any" | "callback" | "event";
  name: string;
};

/** A step's or run's error as stored. */
export interface StoredError {
  code: string;
  message: string;
  name?: string;
}

/** The parts of a workflow's type, for typed calls that name the workflow. */
export type InputOf<W extends AnyWorkflow> = z.input<W["input"]>;
export type OutputOf<W extends AnyWorkflow> = W extends Workflow<any, infer O, any> ? Jsonified<O> : unknown;
export type SignalsOf<W extends AnyWorkflow> = W extends Workflow<any, any, infer S> ? S : SignalSchemas;

export interface WorkflowDefinition<TInput extends z.ZodType, TOutput, TSignals extends SignalSchemas>
  extends LifecycleHooks,
    EventSubscriber,
    WorkflowApprovals {
  /** Unique among the workflows of one `createDurable` (with `version`: per version); stored on every run. */
  name: string;
  /**
   * Stored on the run at start. An instance may register several versions of one name: `start`
   * uses the newest, and each run replays on the version it started with (docs/guide/versions.md, "Versions").
   */
  version?: string | number;
  /** Validates the input at `start` (HTTP 422); the body gets the parsed value. */
  input: TInput;
  /** Validates what the body returns; a mismatch fails the run. */
  output?: z.ZodType<TOutput>;
  /** Signal payload schemas, validated when a signal arrives; other names are refused. */
  signals?: TSignals;
  /**
   * Callback payload schemas by callback id (`ctx.step.callback(id)` takes its schema from here):
   * a delivery is parsed with the zod schema itself, so what it accepts is delivered and what it
   * refuses is a 422 that changes nothing, a coercion, transform or refine included. An inline
   * `schema` must be one JSON Schema can check exactly (docs/guide/composition.md, "Callback URLs").
   */
  callbacks?: CallbackSchemas;
  /**
   * At most `limit` runs with one key executing (claimed) at once; the others stay due, oldest
   * first. The key is computed from the parsed input at start and stored on the run
   * (docs/guide/scaling-out.md, "Concurrency keys and singletons").
   */
  concurrency?: { key: (input: z.output<TInput>) => string; limit: number };
  /**
   * At most one non-terminal run per key: `start` of another while one is active throws
   * `RunStateConflictError` (409) naming the active run.
   */
  singleton?: { key: (input: z.output<TInput>) => string };
  /**
   * At most `limit` runs of one key (default: the whole workflow) start, that is are claimed for
   * the first time, per `period` on the database clock; the others stay due, in order, and start
   * as the window frees (docs/guide/flow-control.md, "Rate limits").
   */
  rateLimit?: { key?: (input: z.output<TInput>) => string; limit: number; period: Duration };
  /**
   * A `start` whose key has a run not yet claimed replaces that run's input and moves its start to
   * now + `period` (never past `maxWait` after the first start), and answers that run with
   * `created: false, debounced: true` (docs/guide/flow-control.md, "Debounce").
   */
  debounce?: { key: (input: z.output<TInput>) => string; period: Duration; maxWait?: Duration };
  /**
   * The run's priority from its parsed input (an integer, higher first; default 0): due runs are
   * claimed by priority, then due time. `start(..., { priority })` overrides it.
   */
  priority?: (input: z.output<TInput>) => number;
  /**
   * The tick starts a run of each due slot of a cron expression, with id `<name>@<slot ISO time>`
   * and `input` (docs/guide/schedules.md, "Schedules"). `timezone` is an IANA name ("UTC" by default).
   */
  schedule?: { cron: string; timezone?: string; input?: z.input<TInput> };
  /**
   * How long a run may take from its start, on the database clock: past it the run fails with
   * code `deadline_exceeded`, its executing step's `abortSignal` aborts and nothing more is
   * written (docs/guide/composition.md, "Deadlines"). `start(..., { deadline })` may set an earlier one.
   */
  deadline?: Duration;
  run(ctx: WorkflowContext<z.output<TInput>, TSignals>, input: z.output<TInput>): Promise<TOutput>;
}

export interface Workflow<
  TInput extends z.ZodType = z.ZodType,
  TOutput = unknown,
  TSignals extends SignalSchemas = SignalSchemas,
> extends Readonly<WorkflowDefinition<TInput, TOutput, TSignals>> {}

/** Any registered workflow, whatever its input, output and signals. */
export type AnyWorkflow = Workflow<any, any, any>;

export interface WorkflowContext<TInput = unknown, TSignals extends SignalSchemas = SignalSchemas> {
  runId: string;
  input: TInput;
  step: StepApi<TSignals>;
  /** Aborted when the run is cancelled or this invocation lost its claim. */
  abortSignal: AbortSignal;
  /**
   * A writer to the run's stream for the `run` or AI step `stepId`, called inside that step's body
   * while it executes: its chunks carry the step's id and attempt (docs/model.md, "Run streams").
   */
  stream(stepId: string): StreamWriter;
  /**
   * Merges `patch` (a JSON object: its keys replace the run's) into the run's metadata, which
   * `status()` and `list()` show and `list({ metadata })` finds. Written with the run's next
   * receipt, suspension or end, under the fence; 4 KiB of JSON in all (docs/guide/runs.md,
   * "Tags and metadata").
   * @throws InvalidInputError when it is not a JSON object or the merged metadata is over 4 KiB
   */
  setMetadata(patch: Record<string, unknown>): void;
  /** A journaled boolean: false where older code went on past here, else true (docs/guide/versions.md, "Patching"). */
  patched(id: string): Promise<boolean>;
  /** Where `patched(id)` stood, once no run takes the old path: consumes the marker a run holds. */
  deprecatePatch(id: string): Promise<void>;
  /**
   * Ends the run as completed (output null, `continuedAs` set) and starts its successor with `input`
   * in one transaction; never returns. Bad input: InvalidInputError, nothing written
   * (docs/guide/continue-as-new.md).
   */
  continueAsNew(input: TInput): Promise<never>;
  log: (...args: unknown[]) => void;
  /** @internal type carrier for signal payloads */
  readonly signals?: { [K in keyof TSignals]: z.output<TSignals[K]> };
}

/** A step's writer to its run's stream: `ctx.stream(stepId)`. */
export interface StreamWriter {
  /**
   * Appends `data` (any JSON value, at most 64 KiB of JSON) to the run's stream. Chunks are sent
   * in order and batched (within about 20 ms, and before the step's receipt).
   * @throws StepLeaseLostError once the run was lost: a superseded owner appends nothing
   */
  write(data: unknown): void;
  /** Sends what is buffered now; resolves once it is stored. */
  flush(): Promise<void>;
}

/** What a step body is told about the execution it runs in. */
export interface StepInfo {
  stepId: string;
  /** "wfe-" + 32 hex: the same for every attempt, replay and redrive; pass it as idempotency key. */
  externalKey: string;
  /** Executions of this step that may have happened, this one included (never fewer). */
  attempt: number;
  /** True when an earlier, lost execution may have run this body (docs/model.md, "Reclaims"). */
  isReclaim: boolean;
  /** Confirms the owner still holds the run; rejects with StepLeaseLostError once superseded. */
  heartbeat(): Promise<void>;
  /** Aborted on timeout, cancel or a lost claim. */
  abortSignal: AbortSignal;
}

/** How the delay grows between attempts (step option `retryBackoff`). */
export interface RetryBackoff {
  /** Multiplier per failed attempt, >= 1. Default 1 (constant delay). */
  factor?: number;
  /** Upper bound of any single delay. Default: none. */
  maxDelay?: Duration;
  /** Full jitter: the delay is drawn uniformly from [0, computed delay). Default false. */
  jitter?: boolean;
}

export interface StepOptions {
  /** The longest the body may take (default "30s"); the step starts only if it fits the budget. */
  lease?: Duration;
  retries?: number;
  retryDelay?: Duration;
  retryBackoff?: RetryBackoff;
  /** Heartbeat on a timer at this interval (shorter than the lease). */
  heartbeat?: Duration;
  /** "fail": a body a lost owner may have started is not run again (StepNotReplaySafeError). */
  onReclaim?: "rerun" | "fail";
  /** Cooperative: the abortSignal fires after this long and the attempt fails with StepTimeoutError. */
  timeout?: Duration;
}

export interface WaitForSignalOptions<T> {
  /**
   * The wait's step id (default: the signal name). Give each wait its own id to wait on one name
   * again and again: each wait takes the oldest delivery no earlier wait took.
   */
  id?: string;
  /** How long to wait; the deadline is stored at the first call and never slides. None: forever. */
  timeout?: Duration;
  /** Parses the payload (beyond the workflow's declared signal schema). */
  schema?: z.ZodType<T>;
}

export interface WaitForOptions<T> {
  /** Asks the outside world; should be quick. A throw is counted and backed off, never fatal. */
  poll: () => T | Promise<T>;
  ready: (value: T) => boolean;
  /** Interval between polls. */
  every: Duration;
  /** Deadline from the first call, stored once; past it the step fails with StepTimeoutError. */
  timeout: Duration;
  /** Interval growth per poll (factor, default 1) up to maxDelay; a throwing poll backs off ×2 at least. */
  pollBackoff?: { factor?: number; maxDelay?: Duration };
  /** The longest one poll may take (default "30s"): it obeys the budget like a `run` step. */
  lease?: Duration;
}

/**
 * The members a wing adds to `ctx.step` (engine/wings.ts), declared by the wing's augmentation of
 * this interface: `ai` by lib/durable/ai/types.ts.
 */
// biome-ignore lint/suspicious/noEmptyInterface: a wing's module augmentation fills it
export interface WingSteps {}

export interface StepApi<TSignals extends SignalSchemas = SignalSchemas> extends WingSteps, EventSteps {
  /** An external effect, at least once; use `s.externalKey` as the idempotency key. */
  run<T>(id: string, fn: (s: StepInfo) => T | Promise<T>, options?: StepOptions): Promise<Jsonified<T>>;
  /** A database effect: `fn`'s statements, the receipt and the fence check commit together, once. */
  tx<T, DB = any>(
    id: string,
    fn: (tx: Transaction<DB>, s: StepInfo) => Promise<T>,
    options?: StepOptions,
  ): Promise<Jsonified<T>>;
  /** Journals a nondeterministic value (uuid, time, random) once. */
  value<T>(id: string, fn: () => T | Promise<T>): Promise<Jsonified<T>>;
  /** Sleeps; the wake time is stored at the first call and never moves. A signal never wakes it early. */
  sleep(id: string, duration: Duration): Promise<void>;
  sleepUntil(id: string, date: Date | string): Promise<void>;
  /**
   * Waits for the next delivery of signal `name` (the step id, unless `options.id` names another);
   * null when the timeout passes first. Typed by the workflow's declared schema for `name`; a name
   * it does not declare does not compile.
   */
  waitForSignal<K extends SignalName<TSignals>, T = SignalOutput<TSignals, K>>(
    name: K,
    options?: WaitForSignalOptions<T>,
  ): Promise<T | null>;
  /** @deprecated Let the declared schema type the payload, or pass `options.schema`. */
  waitForSignal<T>(name: SignalName<TSignals>, options?: WaitForSignalOptions<T>): Promise<T | null>;
  /** Polls until ready: one receipt for the final value, however many polls. */
  waitFor<T>(id: string, options: WaitForOptions<T>): Promise<Jsonified<T>>;
  /**
   * Starts a child run of `workflow` (id `options.id`, default `<run id>/<step id>`; idempotent on
   * it) and waits until it ends, with nothing running meanwhile: its output, typed by the child's
   * `output` schema. A failed or cancelled child throws `ChildRunFailedError`; past `timeout` the
   * child is cancelled and `StepTimeoutError` is thrown (docs/guide/composition.md, "Child runs").
   */
  invoke<W extends AnyWorkflow>(
    id: string,
    workflow: W,
    input: z.input<W["input"]>,
    options?: InvokeOptions,
  ): Promise<OutputOf<W>>;
  /** Starts a child run and goes on; journaled, so a replay starts nothing. */
  start<W extends AnyWorkflow>(
    id: string,
    workflow: W,
    input: z.input<W["input"]>,
    options?: { id?: string },
  ): Promise<ChildRun>;
  /**
   * Waits for the first of several branches, decided by the database clock in one write: the
   * winning branch's name and its value. A delivery to a losing signal branch stays in the
   * mailbox for a later wait; a losing sleep leaves nothing behind (docs/guide/composition.md, "Races").
   */
  waitForAny<const B extends Record<string, RaceBranch<TSignals>>>(
    id: string,
    branches: B,
  ): Promise<RaceResult<B, TSignals>>;
  /**
   * A callback URL for this run: `POST` a JSON body to `url` (no other credential) and
   * `waitForCallback` answers it. Journaled: a replay answers the same URL.
   */
  callback<T = unknown>(id: string, options?: CallbackOptions<T>): Promise<CallbackHandle<T>>;
  /** Waits for the callback's payload (parsed by its schema); null once its timeout passed. */
  waitForCallback<T>(callback: CallbackHandle<T>): Promise<T | null>;
}

export interface InvokeOptions {
  /** The child's run id (default `<run id>/<step id>`): the same id answers the same run. */
  id?: string;
  /** How long to wait for the child; past it the child is cancelled and `StepTimeoutError` thrown. */
  timeout?: Duration;
}

/** A child run started by `ctx.step.start`. */
export interface ChildRun {
  id: string;
  /** Bearer token for the child's status route (derived from DURABLE_SECRET when read). */
  readonly statusToken: string;
}

/** How a run ended, as a `run` branch of `waitForAny` answers it. */
export interface RunOutcome<TOutput = unknown> {
  status: "completed" | "failed" | "cancelled";
  output: TOutput | null;
  error: StoredError | null;
}

/** One branch of `ctx.step.waitForAny`. */
export type RaceBranch<TSignals extends SignalSchemas = SignalSchemas> =
  | { signal: SignalName<TSignals> }
  | { sleep: Duration }
  | { until: Date | string }
  | { run: string }
  | { callback: CallbackHandle<any> };

/**
 * What a branch answers when it wins: a signal's payload, null for a sleep or a date, a run's
 * outcome, a callback's payload (null at its timeout).
 */
export type RaceValue<B, TSignals extends SignalSchemas = SignalSchemas> = B extends { signal: infer K extends string }
  ? SignalOutput<TSignals, K>
  : B extends { sleep: Duration } | { until: Date | string }
    ? null
    : B extends { run: string }
      ? RunOutcome
      : B extends { callback: CallbackHandle<infer T> }
        ? T | null
        : never;

/** `waitForAny`'s answer: the winning branch's name and its value, typed per branch. */
export type RaceResult<B extends Record<string, unknown>, TSignals extends SignalSchemas = SignalSchemas> = {
  [K in keyof B & string]: { branch: K; value: RaceValue<B[K], TSignals> };
}[keyof B & string];

export interface CallbackOptions<T> {
  /** How long the URL accepts a delivery; `waitForCallback` answers null after it. None: forever. */
  timeout?: Duration;
  /**
   * What the JSON body must be: checked by the route (422 otherwise) and parsed for `waitForCallback`.
   * Checked at delivery as JSON Schema, so one it cannot say exactly (a coercion, transform, refine,
   * catch) is refused here with `InvalidInputError`: declare it in `defineWorkflow({ callbacks })`.
   */
  schema?: z.ZodType<T>;
}

/** A callback URL made by `ctx.step.callback`. */
export interface CallbackHandle<T = unknown> {
  /** The step id that made it. */
  id: string;
  /** `<origin>/api/durable/callback/<token>`: POST a JSON body to it. */
  url: string;
  /** The capability in the URL, for `durable.completeCallback(token, payload)`. */
  token: string;
  /** @internal type carrier for the payload */
  readonly __payload?: T;
}

/**
 * Token usage of an AI step, as the AI SDK reports it (fields it did not report are absent); core
 * vocabulary, since RunStatus shows it (schemas.ts).
 */
export interface AiUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
}
