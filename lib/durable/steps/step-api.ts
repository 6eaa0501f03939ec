import { createAiSteps } from "../ai/ai-steps";
import type { StepHost } from "../engine/run/step-host";
import type { CallbackSchemas, StepApi } from "../types";
import { createCallbackSteps } from "./callback-steps";
import { createChildSteps } from "./child-steps";
import { createEffectSteps } from "./effect-steps";
import { never } from "./never";
import { createRaceStep } from "./race-step";
import { type CarriesTxWith, TX_WITH } from "./tx-step";
import { createValueStep } from "./value-step";
import { createWaitSteps } from "./wait-steps";

/**
 * Builds `ctx.step` for one execution over its step host (engine/run/step-host.ts).
 * `declared`: the workflow's callback schemas (`defineWorkflow({ callbacks })`).
 */
export function createStepApi(host: StepHost, declared?: CallbackSchemas): StepApi & CarriesTxWith {
  const effects = createEffectSteps(host);
  const waits = createWaitSteps(host);
  const value = createValueStep(host);
  const children = createChildSteps(host);
  const callbacks = createCallbackSteps(host, declared);

  // A held-back receipt is written before the next step starts, so no step (and no effect) ever
  // depends on a result that is not recorded.
  const afterFlush =
    <A extends unknown[], R>(step: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      const flushing = host.flushHeld();
      return flushing ? flushing.then((ok) => (ok ? step(...args) : never<R>())) : step(...args);
    };

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
    waitForAny: afterFlush(createRaceStep(host)) as StepApi["waitForAny"],
    callback: afterFlush(callbacks.callback) as StepApi["callback"],
    waitForCallback: afterFlush(callbacks.waitForCallback) as StepApi["waitForCallback"],
    // Each AI call is flushed-after as a step of its own (a map's items one by one).
    ai: createAiSteps(
      host,
      {
        execute: afterFlush(effects.execute),
        run: afterFlush(effects.run),
        tx: afterFlush(effects.tx),
        waitForSignal: afterFlush(waits.waitForSignal),
        stream: (stepId) => host.stream(stepId),
      },
      afterFlush,
    ),
    // A tx step in a transaction another library opens (lib/durable/drizzle.ts).
    [TX_WITH]: afterFlush(effects.txWith) as CarriesTxWith[typeof TX_WITH],
  };
}
