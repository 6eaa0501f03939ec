import * as z from "zod";
import { newCallbackId } from "../auth/callback-token";
import { toBoundedMs } from "../duration";
import { type Execution, never } from "../engine/execution";
import type { StepRecorder } from "../engine/step-recorder";
import { storableName } from "../names";
import type { CallbackHandle, CallbackOptions } from "../types";
import { composeOf } from "./child-steps";
import { ownCallbackId, race } from "./race-step";

/**
 * Callback URLs (docs/guide/composition.md, "Callback URLs"). `callback` journals a random id and
 * writes, with its receipt, the capability row (the id, the payload's JSON Schema, the deadline);
 * the token and URL are derived from the id and DURABLE_SECRET on every replay, never stored.
 * `waitForCallback` is a race with one callback branch (step id `<callback id>/wait`).
 */
export function createCallbackSteps(exec: Execution, recorder: StepRecorder) {
  return {
    callback: <T>(id: string, options: CallbackOptions<T> = {}): Promise<CallbackHandle<T>> =>
      makeCallback(exec, recorder, id, options),
    async waitForCallback<T>(handle: CallbackHandle<T>): Promise<T | null> {
      const callbackId = ownCallbackId(exec, handle, "waitForCallback");
      const stepId = storableName(`${handle.id}/wait`, "the wait's step id");
      const { value } = await race(exec, recorder, stepId, [{ name: "callback", callback: callbackId }], "callback");
      const schema = exec.callbacks.get(callbackId);
      return value === null || !schema ? (value as T | null) : (schema.parse(value) as T);
    },
  };
}

async function makeCallback<T>(
  exec: Execution,
  recorder: StepRecorder,
  id: string,
  options: CallbackOptions<T>,
): Promise<CallbackHandle<T>> {
  const timeoutMs =
    options.timeout === undefined ? undefined : toBoundedMs(options.timeout, `callback "${id}" timeout`);
  const { seq, recorded, isReclaim } = exec.reach(id, "callback");
  const handle = (callbackId: string): CallbackHandle<T> => {
    exec.callbacks.set(callbackId, options.schema);
    const compose = composeOf(exec);
    const token = compose.callbackToken(callbackId);
    return { id, token, url: compose.callbackUrl(token) };
  };
  if (recorded?.status === "completed") {
    return handle(((await recorder.resultOf(recorded)) as { callbackId: string }).callbackId);
  }
  if (exec.isStopping) return never();
  return recorder.traced(
    { stepId: id, kind: "callback", attempt: 1, isReclaim },
    async () => {
      const callbackId = newCallbackId();
      const written = await exec.track(() =>
        recorder.write({
          stepId: id,
          seq,
          kind: "callback",
          status: "completed",
          attempt: 1,
          resultJson: JSON.stringify({ callbackId }),
          ...(timeoutMs === undefined ? {} : { deadlineInMs: timeoutMs }),
          callback: { id: callbackId, schema: jsonSchemaOf(options.schema) },
        }),
      );
      if (!written) return never<CallbackHandle<T>>();
      return handle(written.conflict ? (written.recorded.result as { callbackId: string }).callbackId : callbackId);
    },
    () => ({ outcome: "completed" }),
  );
}

/** The payload schema as JSON Schema, for the route to check a delivery with (null: any JSON). */
function jsonSchemaOf(schema: z.ZodType | undefined): unknown {
  if (!schema) return null;
  try {
    return z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  } catch {
    return null; // a schema JSON Schema cannot say: waitForCallback still parses with it
  }
}
