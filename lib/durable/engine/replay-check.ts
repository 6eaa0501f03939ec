// replayTest's rules (docs/guide/edit-and-resume.md, "Replaying a recorded run"): a recorded run
// (`status(id, { ledger: true })`) checked, and each step today's code reaches compared with the
// recording, in order, by id and kind. The replay answers every step from the recorded receipts and
// runs no step body: it stops at the first step that diverges, or where the recording stops.
import { isDeepStrictEqual } from "node:util";
import * as z from "zod";
import { InvalidInputError } from "../errors";
import { isStorableName } from "../names";
import { type LedgerStep, type RunLedger, runStatusValues, stepKindValues, stepStatusValues } from "../schemas";
import type { RecordedReceipt } from "../store";
import type { AnyWorkflow, StepKind } from "../types";

/** The replay of a recorded run took another road than the recording: `stepId` is where. */
export class ReplayDivergenceError extends Error {
  override readonly name = "ReplayDivergenceError";
  constructor(
    message: string,
    /** The step reached (or, for a recorded step never reached, that step); null: the run's end. */
    readonly stepId: string | null,
  ) {
    super(message);
  }
}

/** The replay reached where the recording stops (a step it had not finished): the check is over. */
class EndOfRecording extends Error {
  override readonly name = "EndOfRecording";
}

const recordedStep = z.looseObject({
  id: z.string().refine(isStorableName, "a step id that can be stored"),
  kind: stepKindValues,
  status: stepStatusValues,
  seq: z.number().int().min(0),
  attempt: z.number().int().min(0),
  result: z.unknown(),
  error: z.looseObject({ code: z.string(), message: z.string(), name: z.string().optional() }).nullable(),
  externalKey: z.string().optional(),
});
const recording = z.looseObject({
  id: z.string().refine(isStorableName, "a run id that can be stored"),
  workflow: z.string(),
  status: runStatusValues,
  input: z.unknown(),
  output: z.unknown(),
  steps: z.array(recordedStep),
});

const FINISHED = new Set(["completed", "failed"]);

/**
 * One replay's check: built from the recording (checked first), asked at each step reached
 * (`observe`, through createDurable's `observeStep`), and at the end (`finish`).
 */
export class ReplayCheck {
  readonly ledger: RunLedger;
  private readonly recorded: LedgerStep[];
  private readonly byId: Map<string, LedgerStep>;
  private reached = new Set<string>();
  private stop: ReplayDivergenceError | EndOfRecording | null = null;

  /** @throws InvalidInputError when `ledger` is not a recorded run of `workflow` */
  constructor(workflow: AnyWorkflow, ledger: unknown) {
    const parsed = recording.safeParse(ledger);
    if (!parsed.success || !("input" in (ledger as object)) || !hasResults(ledger as RunLedger)) {
      const why = parsed.success ? "it has no input or no results" : z.prettifyError(parsed.error);
      throw new InvalidInputError(`replayTest: the ledger is not one status(id, { ledger: true }) answered: ${why}`);
    }
    this.ledger = ledger as RunLedger;
    if (this.ledger.workflow !== workflow.name) {
      throw new InvalidInputError(
        `replayTest: the ledger is a run of workflow "${this.ledger.workflow}", not "${workflow.name}"`,
      );
    }
    this.recorded = [...this.ledger.steps].sort((a, b) => a.seq - b.seq);
    this.byId = new Map(this.recorded.map((step) => [step.id, step]));
    if (this.byId.size !== this.recorded.length)
      throw new InvalidInputError("replayTest: the ledger repeats a step id");
  }

  /** The finished receipts, as the harness's database holds them before the replay. */
  receipts(): RecordedReceipt[] {
    return this.recorded
      .filter((step) => FINISHED.has(step.status))
      .map((step) => ({
        stepId: step.id,
        seq: step.seq,
        kind: step.kind,
        status: step.status as "completed" | "failed",
        attempt: step.attempt,
        resultJson: step.status === "completed" ? JSON.stringify(step.result ?? null) : null,
        error: step.error,
        externalKey: step.externalKey ?? null,
      }));
  }

  /** A step reached at `position` of a pass: an error stops the run there, before the step does anything. */
  observe(stepId: string, kind: StepKind, position: number): Error | undefined {
    if (position === 0) this.reached = new Set();
    if (this.stop) return this.stop;
    const expected = this.recorded.find((step) => !this.reached.has(step.id));
    const recorded = this.byId.get(stepId);
    this.reached.add(stepId);
    if (recorded && recorded.kind !== kind) {
      return this.diverge(
        stepId,
        `step "${stepId}" is reached as a ${kind} step; the recording has a ${recorded.kind} step`,
      );
    }
    if (recorded && expected && expected.id !== stepId) {
      return this.diverge(
        stepId,
        `step "${stepId}" is reached before step "${expected.id}", which the recording reached first`,
      );
    }
    if (recorded) return FINISHED.has(recorded.status) ? undefined : this.end();
    if (expected) {
      return this.diverge(
        stepId,
        `a new step "${stepId}" (${kind}) is reached where the recording has step "${expected.id}" (${expected.kind})`,
      );
    }
    if (this.ledger.status !== "completed") return this.end();
    const last = this.recorded[this.recorded.length - 1];
    return this.diverge(
      stepId,
      `a new step "${stepId}" (${kind}) is reached after the recording's last step` +
        `${last ? ` "${last.id}"` : ""}: the recorded run completed there`,
    );
  }

  /**
   * The replay is over: throws the divergence met, else a recorded step never reached, else an
   * end that differs from the recording's completion.
   * @throws ReplayDivergenceError
   */
  finish(replayed: { status: string; output: unknown; error: { message: string } | null }): void {
    if (this.stop instanceof ReplayDivergenceError) throw this.stop;
    if (this.stop) return;
    const missed = this.recorded.find((step) => !this.reached.has(step.id));
    if (missed) {
      throw new ReplayDivergenceError(
        `replayTest: recorded step "${missed.id}" (${missed.kind}) is never reached: ` +
          `the replayed run is ${replayed.status} before it`,
        missed.id,
      );
    }
    if (this.ledger.status !== "completed") return;
    if (replayed.status !== "completed") {
      const why = replayed.error ? `: ${replayed.error.message}` : "";
      throw new ReplayDivergenceError(
        `replayTest: the recorded run completed; the replayed run is ${replayed.status}${why}`,
        null,
      );
    }
    if (!isDeepStrictEqual(replayed.output, this.ledger.output)) {
      throw new ReplayDivergenceError(
        `replayTest: every step matched, but the output differs: recorded ${JSON.stringify(this.ledger.output)}, ` +
          `replayed ${JSON.stringify(replayed.output)}`,
        null,
      );
    }
  }

  /** How many steps the last pass reached. */
  get stepsReached(): number {
    return this.reached.size;
  }

  private diverge(stepId: string, message: string): Error {
    this.stop = new ReplayDivergenceError(`replayTest: ${message}`, stepId);
    return this.stop;
  }

  private end(): Error {
    this.stop = new EndOfRecording("the replay reached where the recording stops");
    return this.stop;
  }
}

/** Whether every step of the ledger carries its `result` (status() without `ledger: true` has none). */
function hasResults(ledger: RunLedger): boolean {
  return ledger.steps.every((step) => "result" in step);
}
