import type { StepHost } from "../engine/run/step-host";
import type { StepMember } from "../engine/wings";
import type { CallbackSchemas, StepApi, WaitForEventOptions, WingSteps } from "../types";
import { createCallbackSteps } from "./callback-steps";
import { createChildSteps } from "./child-steps";
import { createEffectSteps } from "./effect-steps";
import { waitForEvent } from "./event-step";
import { never } from "./never";
import { createRaceStep } from "./race-step";
import { type CarriesTxWith, TX_WITH } from "./tx-step";
import { createValueStep } from "./value-step";
import { createWaitSteps } from "./wait-steps";

/**
 * Builds `ctx.step` for one execution over its step host (engine/run/step-host.ts).
 * `declared`: the workflow's callback schemas (`defineWorkflow({ callbacks })`). `wings`: the
 * members the wings registered (engine/wings.ts: `ai`), built here for this execution.
 */
export function createStepApi(
  host: StepHost,
  declared?: CallbackSchemas,
  wings: ReadonlyMap<string, StepMember> = new Map(),
): StepApi & CarriesTxWith {
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

  const core: Omit<StepApi, keyof WingSteps> = {
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
    waitForEvent: afterFlush((id: string, name: string, options?: WaitForEventOptions) =>
      waitForEvent(host, id, name, options),
    ) as StepApi["waitForEvent"],
  };
  // The wings' members (`ai`): each of their steps is flushed-after too (a map's items one by one).
  const parts = {
    execute: afterFlush(effects.execute),
    run: afterFlush(effects.run),
    tx: afterFlush(effects.tx),
    waitForSignal: afterFlush(waits.waitForSignal),
    stream: (stepId: string) => host.stream(stepId),
  };
  const members = Object.fromEntries([...wings].map(([name, build]) => [name, build(host, parts, afterFlush)]));
  return {
    ...core,
    ...(members as unknown as WingSteps), // the wings' augmentation of WingSteps types them
    // A tx step in a transaction another library opens (lib/durable/drizzle.ts).
    [TX_WITH]: afterFlush(effects.txWith) as CarriesTxWith[typeof TX_WITH],
  };
}
