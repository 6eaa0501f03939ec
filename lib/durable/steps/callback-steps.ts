import type * as z from "zod";
import { newCallbackId } from "../auth/callback-token";
import { toBoundedMs } from "../duration";
import type { StepHost } from "../engine/run/step-host";
import { InvalidInputError } from "../errors";
import { storableName } from "../names";
import type { CallbackHandle, CallbackOptions, CallbackSchemas } from "../types";
import { deliveryCheckOf } from "./callback-schema";
import { composeOf } from "./child-steps";
import { never } from "./never";
import { ownCallbackId, race } from "./race-step";

/**
 * Callback URLs (docs/guide/composition.md, "Callback URLs"). `callback` journals a random id and
 * writes, with its receipt, the capability row (the id, the payload's JSON Schema, the deadline);
 * the token and URL are derived from the id and DURABLE_SECRET on every replay, never stored.
 * `waitForCallback` is a race with one callback branch (step id `<callback id>/wait`). `declared`:
 * the workflow's `callbacks`, the zod schemas a delivery parses with (steps/callback-schema.ts).
 */
export function createCallbackSteps(host: StepHost, declared: CallbackSchemas = {}) {
  return {
    callback: <T>(id: string, options: CallbackOptions<T> = {}): Promise<CallbackHandle<T>> =>
      makeCallback(host, id, options, Object.hasOwn(declared, id) ? declared[id] : undefined),
    async waitForCallback<T>(handle: CallbackHandle<T>): Promise<T | null> {
      const callbackId = ownCallbackId(host, handle, "waitForCallback");
      const stepId = storableName(`${handle.id}/wait`, "the wait's step id");
      const { value } = await race(host, stepId, [{ name: "callback", callback: callbackId }], "callback");
      const schema = host.callbacks.get(callbackId);
      return value === null || !schema ? (value as T | null) : (schema.parse(value) as T);
    },
  };
}

async function makeCallback<T>(
  host: StepHost,
  id: string,
  options: CallbackOptions<T>,
  declared: z.ZodType | undefined,
): Promise<CallbackHandle<T>> {
  const timeoutMs =
    options.timeout === undefined ? undefined : toBoundedMs(options.timeout, `callback "${id}" timeout`);
  if (declared && options.schema && options.schema !== declared) {
    throw new InvalidInputError(
      `callback "${id}": its schema is declared in defineWorkflow({ callbacks }); give none here`,
    );
  }
  const schema = declared ?? options.schema;
  // Checked before the id is reached, so a body that catches the refusal may use the id again. A
  // callback already recorded (by a release that wrote any schema's JSON Schema) keeps its row.
  const stored = host.inLedger(id) ? null : rowSchemaOf(id, schema, declared !== undefined);
  const { seq, recorded, isReclaim } = host.reach(id, "callback");
  const handle = (callbackId: string): CallbackHandle<T> => {
    host.callbacks.set(callbackId, schema);
    const compose = composeOf(host);
    const token = compose.callbackToken(callbackId);
    return { id, token, url: compose.callbackUrl(token) };
  };
  if (recorded?.status === "completed") {
    return handle(((await host.answer(recorded)) as { callbackId: string }).callbackId);
  }
  if (host.stopping) return never();
  return host.trace(
    { stepId: id, kind: "callback", attempt: 1, isReclaim },
    async () => {
      const callbackId = newCallbackId();
      const written = await host.track(() =>
        host.write({
          stepId: id,
          seq,
          kind: "callback",
          status: "completed",
          attempt: 1,
          resultJson: JSON.stringify({ callbackId }),
          ...(timeoutMs === undefined ? {} : { deadlineInMs: timeoutMs }),
          callback: { id: callbackId, schema: stored },
        }),
      );
      if (!written) return never<CallbackHandle<T>>();
      return handle(written.conflict ? (written.recorded.result as { callbackId: string }).callbackId : callbackId);
    },
    () => ({ outcome: "completed" }),
  );
}

/**
 * The schema the callback's row holds, for the delivery to check a payload with (null: any JSON):
 * its JSON Schema when that accepts exactly what zod accepts. A declared schema is parsed by zod at
 * delivery, so one JSON Schema cannot say gets none; an inline one of those is refused here, before
 * any URL exists: the delivery could not answer 422 for what zod refuses, or would refuse what it
 * accepts (`z.coerce.number()` and `"12.50"`).
 * @throws InvalidInputError for an inline schema the delivery cannot check
 */
function rowSchemaOf(id: string, schema: z.ZodType | undefined, declared: boolean): unknown {
  if (!schema) return null;
  const check = deliveryCheckOf(schema);
  if (check.exact) return check.json;
  if (declared) return null;
  throw new InvalidInputError(
    `callback "${id}": its schema has ${check.why}, which the delivery cannot check as JSON Schema; ` +
      `declare it in defineWorkflow({ callbacks: { "${id}": schema } }) and the delivery parses with zod`,
  );
}
