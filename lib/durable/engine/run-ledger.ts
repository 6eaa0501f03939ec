// A run's ledger for export (docs/guide/edit-and-resume.md, "Replaying a recorded run"): the
// status with the run's input and every receipt's result and stored error, opened. A result the
// read left out (over the inline limit, docs/sql.md "durable_ledger") is read on its own.
import type { LedgerStep, RunLedger, RunStatus } from "../schemas";
import { readStepResult, type RunRecord, type StepRecord } from "../store";
import type { DurableInstance } from "./instance";

/** The ledger of a run whose record and steps were read and opened, as `status` built `status`. */
export async function toRunLedger(
  instance: DurableInstance,
  status: RunStatus,
  run: RunRecord,
  steps: StepRecord[],
): Promise<RunLedger> {
  const ledgerSteps: LedgerStep[] = await Promise.all(
    steps.map(async (step, index) => {
      const result = step.resultOmitted
        ? await instance.codec.open(await readStepResult(instance.db, run.id, step.stepId))
        : step.result;
      const shown = status.steps[index]!;
      return { ...shown, seq: step.seq, result: result ?? null, error: step.error ? { ...step.error } : null };
    }),
  );
  return { ...status, input: run.input, steps: ledgerSteps };
}
