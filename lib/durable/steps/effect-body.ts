// What an effect step's body hands back to the runner in effect-steps.ts: its result's JSON, the
// receipt a `tx` body already wrote, or a Rollback (tx-step.ts). Its own module so that the
// runner and the `tx` body share it without importing each other.
import { ENVELOPE_PREFIX } from "../encryption/envelope";
import type { StepHost } from "../engine/run/step-host";
import { InvalidInputError } from "../errors";
import { toJsonText } from "../json";
import type { RecordResult } from "../store";
import type { StepInfo } from "../types";

/** A body's result: for `tx` the receipt was already written inside its transaction. */
export type BodyResult = { json: string; receipt?: Extract<RecordResult, { owned: true }> };
export type Body = (s: StepInfo, seq: number) => Promise<BodyResult>;
/** The kinds of step that run a body with an effect: `run`, `tx`, and AI calls (ai/ai-steps.ts). */
export type EffectKind = "run" | "tx" | "ai";

/**
 * Thrown inside a `tx` transaction to roll it back without recording; never reaches users.
 * `refused`: the fence refused the receipt (rather than the deadline or the database).
 */
export class Rollback {
  constructor(
    readonly result: RecordResult | null,
    readonly refused: boolean,
  ) {}
}

/** The stored JSON text of a step's result (the size limit, jsonb-safe). */
export function resultJson(host: StepHost, value: unknown, stepId: string): string {
  const json = toJsonText(value, { limit: host.settings.maxResultBytes, stepId });
  // Stored plain (no sealing key), a value holding the envelope prefix would read as one.
  if (!host.settings.seals && json.includes(ENVELOPE_PREFIX)) {
    throw new InvalidInputError(
      `the result of step "${stepId}" contains the text "${ENVELOPE_PREFIX}", which marks an encrypted ` +
        "payload: without an encryption key it cannot be stored",
    );
  }
  return json;
}
