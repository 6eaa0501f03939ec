// Entry point for tests of your workflows: a durable instance on in-memory PGlite, and calls that
// drive a run as far as it can go now. No server, no cron, no clock of your own. It loads the ai
// wing (ai/wing.ts): a workflow under test may call `ctx.step.ai`, which `mockAi` answers.
import "./ai/wing";
import type { z } from "zod";
import { type AnyKysely, connect } from "./drivers/connect";
import { createDurable, type Durable, type DurableOptions } from "./engine/create-durable";
import { notePayloadCodec, payloadCodecOf } from "./engine/payloads";
import { storedVersion } from "./engine/define-workflow";
import { ReplayCheck, ReplayDivergenceError } from "./engine/replay-check";
import type { StepMock, StepObserver } from "./engine/run/execution";
import { InvalidInputError, RunNotFoundError } from "./errors";
import { storableName } from "./names";
import type { RunLedger, RunStatus } from "./schemas";
import { completeAiTextResult } from "./ai/ai-steps";
import { insertRecordedRun, listOpenDescendants } from "./store";
import type { AiObjectResult, AiTextResult } from "./ai/types";
import type { AnyWorkflow, Duration } from "./types";

export type { StepMock };
export { ReplayDivergenceError };

/** What `mockAi` takes: the text (or the object, for generateObject); the rest is filled in. */
export type AiMockResult =
  | Partial<AiTextResult>
  | (Partial<Omit<AiObjectResult<unknown>, "object">> & { object: unknown });

export interface TestDurableOptions extends Omit<DurableOptions, "db" | "testing" | "mockStep"> {
  /** Database URL; default an in-memory PGlite of its own ("memory://"). */
  url?: string;
  /** Runs once after the migration, on the instance's database: the app's own tables, say. */
  setup?: (db: AnyKysely) => Promise<void>;
  /**
   * `ctx.step.sleep` and `sleepUntil` complete at once, recorded as completed sleeps (a replay
   * answers them from the receipt). Only sleeps: a signal's timeout, a `waitFor` poll and a retry
   * delay still take `advanceClock` (or their time, when short enough to wait in process).
   */
  skipSleeps?: boolean;
}

/** Which runs a mock applies to: every run (the default), or only `runId`. */
export interface MockScope {
  runId?: string;
}

/**
 * A durable instance for tests. Every `Durable` method is here too: `signal({ runId, name,
 * payload })` delivers into the run's mailbox and `drive(id)` then takes the run on from its wait;
 * `cancel(id, reason?)` ends a run that is not finished; `status(id)`, `retry(id)` and `db` (the
 * PGlite handle, for the app's own tables) work as on any instance.
 */
export interface TestDurable extends Durable {
  /**
   * Starts a run (idempotent on `id`) and drives it, with the runs it starts (`ctx.step.invoke`,
   * `ctx.step.start`, and theirs), until none of them can go on now: each is finished or waits
   * for time or a signal.
   */
  run<W extends AnyWorkflow>(workflow: W, input: z.input<W["input"]>, options?: { id?: string }): Promise<RunStatus>;
  /**
   * Drives a run that exists, with the runs below it, until none can go on now (after a signal,
   * or after `advanceClock`).
   */
  drive(id: string): Promise<RunStatus>;
  /** Moves the database clock of this instance forward: sleeps, retry delays and deadlines come due. */
  advanceClock(duration: Duration): Promise<void>;
  /**
   * From now on, each attempt of the `run`, `tx` or AI step `stepId` does not run its body:
   * `{ result }` is recorded as its result (after the JSON round trip, with a receipt as usual);
   * `{ error }` (an Error, or a message) fails the attempt as if the body threw it, so retries and
   * their delays apply and a `FatalStepError` fails at once; `{ timeout: true }` fails it with
   * `StepTimeoutError`. A step that already has a receipt answers from it. A later mock of the same
   * id and scope replaces this one; a mock scoped to a run wins over one for every run.
   */
  mockStep(stepId: string, mock: StepMock, scope?: MockScope): void;
  /**
   * `mockStep` for an AI step (`ctx.step.ai.*`; item i of `ai.map(id, ...)` is step `${id}/${i}`):
   * `result` may be partial (`{ text }`, or `{ object }` for generateObject); the rest of the stored
   * shape is filled (finishReason "stop", the usage and response given or none), so the workflow
   * sees what a real call returns. generateObject still checks the object against its schema.
   */
  mockAi(stepId: string, result: AiMockResult, scope?: MockScope): void;
  /** Removes every mock: the steps run their bodies again. */
  clearMocks(): void;
}

// Each advance finishes a run, parks it, or gives it back because the budget ran out; runs still
// going after this many invocations in one drive are left as they are for the test to look at.
const MAX_ADVANCES = 1_000;

/**
 * A durable instance for tests, on the real engine, migrated and ready.
 *
 * @example
 * const durable = await createTestDurable({ workflows: [approval], skipSleeps: true });
 * const waiting = await durable.run(approval, { docId: "d-1" });   // waiting for "decision"
 * await durable.signal({ runId: waiting.id, name: "decision", payload: { approved: true } });
 * durable.mockStep("publish", { result: { url: "https://example.com/d-1" } });
 * expect(await durable.drive(waiting.id)).toMatchObject({ status: "completed" });
 * await durable.close();
 */
export function createTestDurable(options: TestDurableOptions): Promise<TestDurable> {
  return openTestDurable(options);
}

async function openTestDurable(options: TestDurableOptions, observeStep?: StepObserver): Promise<TestDurable> {
  const { url = "memory://", setup, ...durableOptions } = options;
  // A fixed secret for status tokens: tests need no DURABLE_SECRET and print no warning about it.
  const secrets = { durable: "durable-testing-secret", ...durableOptions.secrets };
  // Mocks for every run by step id, and mocks of one run by run id and step id.
  const mocks = new Map<string, StepMock>();
  const runMocks = new Map<string, StepMock>();
  const runKey = (runId: string, stepId: string) => `${runId}\u0000${stepId}`;
  const db = await connect(url);
  const durable = createDurable({
    ...durableOptions,
    secrets,
    db,
    testing: true,
    observeStep,
    mockStep: (runId, stepId) => runMocks.get(runKey(runId, stepId)) ?? mocks.get(stepId),
  });
  try {
    await durable.migrate();
    await setup?.(db);
  } catch (error) {
    await durable.close().catch(() => {});
    throw error;
  }

  const drive = (id: string) => driveWithDescendants(durable, db, id);

  function mockStep(stepId: string, mock: StepMock, scope: MockScope = {}): void {
    storableName(stepId, "a step id");
    const kinds = ["result", "error", "timeout"].filter(
      (key) => mock !== null && typeof mock === "object" && key in mock,
    );
    if (kinds.length !== 1 || ("timeout" in mock && mock.timeout !== true)) {
      throw new InvalidInputError(
        `mockStep("${stepId}"): give exactly one of { result }, { error } or { timeout: true }`,
      );
    }
    if (scope.runId === undefined) mocks.set(stepId, mock);
    else runMocks.set(runKey(storableName(scope.runId, "a run id"), stepId), mock);
  }

  const testDurable: TestDurable = {
    ...durable,
    async run(workflow, input, runOptions = {}) {
      const { id } = await durable.start(workflow, input, runOptions);
      return drive(id);
    },
    drive,
    advanceClock: durable.testing.advanceClock,
    mockStep,
    mockAi(stepId, result, scope) {
      mockStep(stepId, { result: completeAiResult(result) }, scope);
    },
    clearMocks() {
      mocks.clear();
      runMocks.clear();
    },
  };
  // A copy of the facade: the wings that read payloads open them with its codec too.
  notePayloadCodec(testDurable, payloadCodecOf(durable));
  return testDurable;
}

// A run and the runs below it, deepest first, then the run, round after round until a round moves
// none: a parent waiting on a child (invoke, or waitForAny on a started one) is due once the child
// ended, and the next round takes it on (docs/guide/testing.md, "Driving runs").
async function driveWithDescendants(durable: Durable, db: AnyKysely, id: string): Promise<RunStatus> {
  let advances = 0;
  for (let moved = true; moved && advances < MAX_ADVANCES; ) {
    moved = false;
    for (const runId of [...(await listOpenDescendants(db, id)), id]) {
      while (advances < MAX_ADVANCES) {
        advances++;
        const outcome = await durable.advance(runId);
        // null: not due (waiting for a later time, a signal or another run) or finished;
        // "waiting" may have parked on a wait that is already due, so one more advance decides.
        if (outcome === null) break;
        moved = true;
        if (outcome === "completed" || outcome === "failed" || outcome === "lost") break;
      }
    }
  }
  const status = await durable.status(id);
  if (!status) throw new RunNotFoundError(id);
  return status;
}

/** A partial AI result made whole: what `ctx.step.ai` stores for a call that finished normally. */
function completeAiResult(partial: AiMockResult): AiTextResult | AiObjectResult<unknown> {
  if (!("object" in partial)) return completeAiTextResult(partial);
  const { object, ...rest } = partial;
  const { text: _text, ...filled } = completeAiTextResult(rest);
  return { object, ...filled };
}

/** What a replay that matched its recording answers. */
export interface ReplayResult {
  /** How the replayed run stands: as recorded, or "failed" where the replay stopped with the recording. */
  status: RunStatus["status"];
  output: unknown;
  /** How many steps the replay reached (each answered from a recorded receipt). */
  steps: number;
}

/**
 * Replays a recorded run (`await durable.status(id, { ledger: true })`, or the dashboard's "Export
 * ledger") against `workflow` as the code is today, on an in-memory PGlite of its own: each step
 * is answered from its recorded receipt and no step body runs. Resolves when every step matched the
 * recording, in order, by id and kind, up to where the recording stops (and a completed recording's
 * output). `options.workflows`: the other workflows the body names (invoke, start).
 * @throws ReplayDivergenceError naming the first step that diverges
 * @throws InvalidInputError when `ledger` is not a recorded run of `workflow`
 *
 * @example
 * const ledger = await durable.status(runId, { ledger: true });   // in production, saved as JSON
 * await replayTest(checkout, ledger!);   // in a test, against today's code
 */
export async function replayTest(
  workflow: AnyWorkflow,
  ledger: RunLedger,
  options: { workflows?: AnyWorkflow[] } = {},
): Promise<ReplayResult> {
  const check = new ReplayCheck(workflow, ledger);
  const { id } = check.ledger;
  const others = (options.workflows ?? []).filter((other) => other !== workflow);
  const durable = await openTestDurable(
    { workflows: [workflow, ...others], log: () => {} },
    (runId, stepId, kind, at) => (runId === id ? check.observe(stepId, kind, at) : undefined),
  );
  try {
    await insertRecordedRun(
      durable.db as never,
      {
        id,
        workflow: workflow.name,
        version: storedVersion(workflow.version),
        inputJson: JSON.stringify(check.ledger.input ?? null),
      },
      check.receipts(),
    );
    const replayed = await durable.drive(id);
    check.finish(replayed);
    return { status: replayed.status, output: replayed.output, steps: check.stepsReached };
  } finally {
    await durable.close();
  }
}
