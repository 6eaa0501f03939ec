import type { Execution } from "../engine/run/execution";
import { never } from "../engine/run/execution";
import type { StepRecorder } from "../engine/run/step-recorder";
import type { CallbackSchemas, StepApi } from "../types";
import { createAiSteps } from "./ai-steps";
import { createCallbackSteps } from "./callback-steps";
import { createChildSteps } from "./child-steps";
import { createEffectSteps } from "./effect-steps";
import { type CarriesTxWith, TX_WITH } from "./tx-step";
import { createRaceStep } from "./race-step";
import { createValueStep } from "./value-step";
import { createWaitSteps } from "./wait-steps";

/** Builds `ctx.step` for one execution, over the recorder its final write shares. */
/** `declared`: the workflow's callback schemas (`defineWorkflow({ callbacks })`). */
export function createStepApi(
  exec: Execution,
  recorder: StepRecorder,
  declared?: CallbackSchemas,
): StepApi & CarriesTxWith {
  const effects = createEffectSteps(exec, recorder);
  const waits = createWaitSteps(exec, recorder);
  const value = createValueStep(exec, recorder);
  const children = createChildSteps(exec, recorder);
  const callbacks = createCallbackSteps(exec, recorder, declared);

  // A held-back receipt is written before the next step starts, so no step (and no effect) ever
  // depends on a result that is not recorded.
  const afterFlush =
    <A extends unknown[], R>(step: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      recorder.holding ? recorder.flush().then((ok) => (ok ? step(...args) : never<R>())) : step(...args);

  return {
    run: afterFlush(effects.run) as StepApi["run"],
    tx: afterFlush(effects.tx) as StepApi["tx"],
    value: afterFlush(value) as StepApi["value"],
    sleep: afterFlush(waits.sleep),
    sleepUntil: afterFlush(waits.sleepUntil),
    waitForSignal: afterFlush(waits.waitForSignal) as StepApi["waitForSignal"],
    waitFor: afterFlush(waits.waitFor) as StepApi["waitFor"],
    invoke: afterFlush(children.invoke) as StepApi["invoke"],
    start: afterFlush(children.start) as StepApi["start"],
    waitForAny: afterFlush(createRaceStep(exec, recorder)) as StepApi["waitForAny"],
    callback: afterFlush(callbacks.callback) as StepApi["callback"],
    waitForCallback: afterFlush(callbacks.waitForCallback) as StepApi["waitForCallback"],
    // Each AI call is flushed-after as a step of its own (a map's items one by one).
    ai: createAiSteps(
      exec,
      recorder,
      {
        execute: afterFlush(effects.execute),
        run: afterFlush(effects.run),
        tx: afterFlush(effects.tx),
        waitForSignal: afterFlush(waits.waitForSignal),
        stream: (stepId) => exec.streams.writer(stepId),
      },
      afterFlush,
    ),
    // A tx step in a transaction another library opens (lib/durable/drizzle.ts).
    [TX_WITH]: afterFlush(effects.txWith) as CarriesTxWith[typeof TX_WITH],
  };
}
