import { InvalidInputError } from "./errors";
import { hasUnstorableText } from "./text";

/**
 * The one check for every id and name the toolkit stores: run ids, step ids, signal names,
 * delivery ids, workflow names. They are text columns, compared and indexed as given: a non-empty
 * string of at most 255 characters, without NUL or a lone surrogate (which Postgres cannot store
 * as given: text.ts). The API, the
 * engine and the routes all ask this, so a bad name is refused where it enters, never wedged in
 * the engine (docs/decisions.md, "One name check").
 */
export const MAX_NAME_LENGTH = 255;

export const NAME_RULE = `a non-empty string of at most ${MAX_NAME_LENGTH} characters, without NUL or a lone surrogate`;

export function isStorableName(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_NAME_LENGTH && !hasUnstorableText(value);
}

/**
 * Returns `value` when it is a storable name.
 * @throws InvalidInputError naming `what` ("a run id", "step id", ...) and the rule otherwise
 */
export function storableName(value: unknown, what: string): string {
  if (isStorableName(value)) return value;
  const shown =
    typeof value === "string" ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value) : typeof value;
  throw new InvalidInputError(`${what} ${shown} is not ${NAME_RULE}`);
}
