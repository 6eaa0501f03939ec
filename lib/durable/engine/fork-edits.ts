// Edit and resume (docs/guide/edit-and-resume.md): fork's `overrides` and `reason` checked and
// sealed before the one statement that forks (store/fork-run.ts). A value is checked like a step
// result (docs/rules.md, rule 10) and sealed under the fork's id, whose key opens its receipts.
import { InvalidInputError } from "../errors";
import { toJsonText } from "../json";
import { storableName } from "../names";
import type { ForkOverride } from "../store";
import { hasUnstorableText } from "../text";
import { checkPlainStorable } from "./payloads";
import type { PayloadCodec } from "../encryption/payload-codec";

/** Options of `fork`. */
export interface ForkOptions {
  /** The step to start over from: its receipt and every later one are not copied. */
  fromStep: string;
  /** The new run's id (default a new uuid); the same fork again answers `created: false`. */
  id?: string;
  /**
   * Edit and resume (docs/guide/edit-and-resume.md): step id → the value the fork's receipt of
   * that step carries, completed, in place of the source's. Each is a `run`, `tx` or `value` step
   * the source reached (before `fromStep`, at it, or after it); a value is checked like a step's
   * result (JSON, `maxResultBytes`) and sealed like one. Each is noted `step.edited` on the timeline.
   */
  overrides?: Record<string, unknown>;
  /** Why the receipts were edited: shown with each `step.edited` event (at most 1000 characters). */
  reason?: string;
}

/** The longest `reason` a fork takes, in characters (as cancelMany's). */
export const MAX_EDIT_REASON = 1000;

/** The most steps one fork overrides. */
export const MAX_OVERRIDES = 100;

/** What a fork writes for its edits: the receipts' results sealed, the reason sealed (or null). */
export interface ForkEdit {
  overrides: ForkOverride[];
  reason: string | null;
}

/**
 * Checks `overrides` (an object of step id to value) and `reason`, and seals them under `forkId`.
 * Whether each step exists in the source, and is of a kind whose receipt is a value, is checked
 * by the statement that forks, under the source's lock.
 * @throws InvalidInputError naming the step or the option, before anything is written
 */
export async function sealForkEdit(
  settings: { codec: PayloadCodec; maxResultBytes: number },
  forkId: string,
  overrides: unknown,
  reason: unknown,
): Promise<ForkEdit> {
  if (
    reason !== undefined &&
    (typeof reason !== "string" || hasUnstorableText(reason) || reason.length > MAX_EDIT_REASON)
  ) {
    throw new InvalidInputError(
      `fork: a reason is a string of at most ${MAX_EDIT_REASON} characters, without NUL or a lone surrogate`,
    );
  }
  if (overrides === undefined) {
    if (reason !== undefined) throw new InvalidInputError("fork: a reason goes with overrides, the edits it explains");
    return { overrides: [], reason: null };
  }
  if (overrides === null || typeof overrides !== "object" || Array.isArray(overrides)) {
    throw new InvalidInputError("fork: overrides is an object of step id to the value its receipt carries");
  }
  const entries = Object.entries(overrides);
  if (entries.length === 0) throw new InvalidInputError("fork: overrides names no step");
  if (entries.length > MAX_OVERRIDES) throw new InvalidInputError(`fork: at most ${MAX_OVERRIDES} overrides`);
  const sealed = await Promise.all(
    entries.map(async ([step, value]) => {
      const stepId = storableName(step, "fork: an overridden step id");
      const json = toJsonText(value, { limit: settings.maxResultBytes, stepId });
      checkPlainStorable(settings.codec, json, `fork: the override of step "${stepId}"`);
      const bytes = Buffer.byteLength(json, "utf8");
      return { step: stepId, bytes, resultJson: await settings.codec.sealJson(forkId, json) };
    }),
  );
  return {
    overrides: sealed,
    reason: reason === undefined ? null : await settings.codec.sealText(forkId, reason as string),
  };
}
