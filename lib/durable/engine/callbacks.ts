// `completeCallback()`: a callback URL's payload delivered from code, and by the callback route
// (docs/guide/composition.md, "Callback URLs").
import * as z from "zod";
import { callbackIdOf } from "../auth/callback-token";
import { resolveSecret } from "../auth/secrets";
import { CallbackNotFoundError, InvalidInputError, RunStateConflictError } from "../errors";
import { toJsonText } from "../json";
import { storableName } from "../names";
import { type CallbackRecord, deliverCallback, readCallback } from "../store";
import { versionKey } from "./define-workflow";
import type { CallbackResult } from "./durable-api";
import { assertOpen, type DurableInstance } from "./instance";

/** The largest callback payload, in bytes of JSON (the route refuses a larger body with 413). */
export const MAX_CALLBACK_BYTES = 256 * 1024;

/**
 * Delivers `payload` to the callback `token` names: refused as not found for a malformed, forged
 * or unknown token (the same error for each), checked against the callback's schema, and stored
 * as its first delivery; a repeat of `id` (an idempotency key) changes nothing.
 */
export async function completeCallback(
  instance: DurableInstance,
  token: string,
  payload: unknown,
  options: { id?: string } = {},
): Promise<CallbackResult> {
  assertOpen(instance);
  const callbackId = callbackIdOf(resolveSecret("durable", instance.secrets?.durable, instance.log), token);
  if (callbackId === null) throw new CallbackNotFoundError();
  const deliveryKey = options.id === undefined ? null : storableName(options.id, "an idempotency key");
  const payloadJson = toJsonText(payload === undefined ? null : payload, { limit: MAX_CALLBACK_BYTES });
  const callback = await readCallback(instance.db, callbackId);
  if (!callback) throw new CallbackNotFoundError();
  // The zod schema the run's version declares is the check; else the row's JSON Schema, which a
  // callback gets only when it checks exactly what zod does (docs/guide/composition.md, "Callback URLs").
  const declared = declaredSchema(instance, callback);
  if (declared) checkWithZod(declared, JSON.parse(payloadJson), callback.stepId);
  else if (callback.schema !== null) checkPayload(callback.schema, JSON.parse(payloadJson), callback.stepId);
  // Checked above on the plaintext; stored sealed under the callback's run (engine/payloads.ts).
  const sealedJson = await instance.codec.sealJson(callback.runId, payloadJson);
  const outcome = await deliverCallback(instance.db, { id: callbackId, payloadJson: sealedJson, deliveryKey });
  const answer = { ok: true as const, runId: callback.runId };
  if (outcome === "delivered") return { ...answer, delivered: true, alreadyDelivered: false };
  if (outcome === "repeat") return { ...answer, delivered: false, alreadyDelivered: true };
  if (outcome === "not_found") throw new CallbackNotFoundError();
  throw new RunStateConflictError(
    outcome === "resolved"
      ? `callback "${callback.stepId}" has already been delivered`
      : outcome === "timed_out"
        ? `callback "${callback.stepId}" timed out`
        : `the run of callback "${callback.stepId}" has ended`,
  );
}

/** The zod schema the run's version declares for this callback (`defineWorkflow({ callbacks })`). */
function declaredSchema(instance: DurableInstance, callback: CallbackRecord): z.ZodType | undefined {
  const callbacks = instance.registry.byVersion.get(versionKey(callback.workflow, callback.version))?.callbacks;
  return callbacks && Object.hasOwn(callbacks, callback.stepId) ? callbacks[callback.stepId] : undefined;
}

/** Checks a payload with the declared zod schema (422 otherwise); the payload is stored as sent. */
function checkWithZod(schema: z.ZodType, payload: unknown, stepId: string): void {
  const parsed = schema.safeParse(payload);
  if (!parsed.success) refuse(stepId, parsed.error.issues);
}

/** Checks a payload against the JSON Schema stored from the callback's zod schema (422 otherwise). */
function checkPayload(schema: unknown, payload: unknown, stepId: string): void {
  let parsed: z.ZodSafeParseResult<unknown>;
  try {
    parsed = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]).safeParse(payload);
  } catch {
    return; // a schema JSON Schema cannot say: waitForCallback parses with the real one
  }
  if (!parsed.success) refuse(stepId, parsed.error.issues);
}

function refuse(stepId: string, issues: unknown[]): never {
  throw new InvalidInputError(`the payload of callback "${stepId}" does not match its schema`, { issues });
}
