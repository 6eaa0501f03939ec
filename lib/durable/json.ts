import { InvalidInputError, ResultTooLargeError } from "./errors";

/** Default largest step result or run output, in UTF-8 bytes of its JSON text: 1 MiB. */
export const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024;

/** Options of {@link toJsonText} and {@link roundTrip}. */
export interface JsonTextOptions {
  /** Largest allowed size of the JSON text, in UTF-8 bytes. */
  limit: number;
  /** The step whose result this is, named in errors. */
  stepId?: string;
}

const bigIntAsString = (_key: string, value: unknown): unknown =>
  typeof value === "bigint" ? value.toString() : value;

// Escapes Postgres jsonb refuses: \u0000 ("unsupported Unicode escape sequence") and a lone
// surrogate (JSON.stringify escapes exactly those; paired surrogates it writes raw). The escape
// counts only after an even number of backslashes: `\\u0000` is an escaped backslash + "u0000",
// which jsonb stores fine. Outside strings JSON has no backslashes, so no other context matters.
const UNSTORABLE_ESCAPE = /(?<!\\)(?:\\\\)*\\u(0000|d[89a-f][0-9a-f]{2})/;

/**
 * Serializes a step result (or run output) to the JSON text that is stored, enforcing the size
 * limit and what Postgres jsonb accepts, so a bad result fails clearly at once instead of leaving
 * a step that can never record.
 *
 * JSON semantics apply: BigInt becomes its decimal string, Dates their ISO string, `undefined`
 * properties disappear, NaN/Infinity become null; a top-level `undefined` (or function) is "null".
 *
 * @throws ResultTooLargeError when the text is over `opts.limit` UTF-8 bytes
 * @throws InvalidInputError when the value cannot be serialized (a cycle, a throwing `toJSON`) or
 *   contains a NUL character or a lone surrogate, which Postgres jsonb cannot store
 *
 * @example
 * toJsonText({ n: 10n, at: new Date(0) }, { limit: DEFAULT_MAX_RESULT_BYTES });
 * // '{"n":"10","at":"1970-01-01T00:00:00.000Z"}'
 */
export function toJsonText(value: unknown, opts: JsonTextOptions): string {
  const what = opts.stepId === undefined ? "result" : `result of step "${opts.stepId}"`;
  let text: string | undefined;
  try {
    text = JSON.stringify(value, bigIntAsString);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new InvalidInputError(`${what} cannot be serialized as JSON: ${reason}`, { cause });
  }
  text ??= "null";
  const bad = UNSTORABLE_ESCAPE.exec(text);
  if (bad) {
    const hex = bad[1]!.toUpperCase();
    const char = hex === "0000" ? "a NUL character (U+0000)" : `a lone surrogate (U+${hex})`;
    throw new InvalidInputError(`${what} contains ${char}, which Postgres jsonb cannot store`);
  }
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > opts.limit) {
    throw new ResultTooLargeError({ stepId: opts.stepId, bytes, limit: opts.limit });
  }
  return text;
}

/**
 * The value as a replay will see it: `JSON.parse(toJsonText(value, opts))`. A first execution
 * returns this, so it returns exactly what every later replay answers from the receipt.
 *
 * @throws as {@link toJsonText}
 *
 * @example
 * roundTrip({ at: new Date(0), gone: undefined, n: 1n }, { limit: 1024 });
 * // { at: "1970-01-01T00:00:00.000Z", n: "1" }
 */
export function roundTrip<T>(value: T, opts: JsonTextOptions): unknown {
  return JSON.parse(toJsonText(value, opts));
}

/**
 * Whether the JSON value `container` contains `contained`, as PostgreSQL's jsonb `@>` answers:
 * an object contains an object whose every key it has with a value containing that key's value;
 * an array contains an array whose every element is a scalar it has, or a container one of its
 * containers contains; at the top level (only there) an array contains a scalar it has; scalars
 * contain equal scalars. Both are plain JSON (JSON.parse's values). Matches events to `match`
 * (docs/guide/events.md), in process where the stored data is sealed.
 */
export function jsonContains(container: unknown, contained: unknown): boolean {
  const outerObject = isJsonObject(container);
  if (outerObject !== isJsonObject(contained)) return false;
  if (outerObject) return containsValue(container, contained);
  if (!Array.isArray(container) && Array.isArray(contained)) return false;
  return arrayContains(
    Array.isArray(container) ? container : [container],
    Array.isArray(contained) ? contained : [contained],
  );
}

const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Below the top level: a container contains only a container of its own kind; a scalar an equal scalar. */
function containsValue(container: unknown, contained: unknown): boolean {
  if (isJsonObject(container)) {
    if (!isJsonObject(contained)) return false;
    return Object.keys(contained).every(
      (key) => Object.hasOwn(container, key) && containsValue(container[key], contained[key]),
    );
  }
  if (Array.isArray(container)) return Array.isArray(contained) && arrayContains(container, contained);
  if (isJsonObject(contained) || Array.isArray(contained)) return false;
  return container === contained;
}

function arrayContains(container: readonly unknown[], contained: readonly unknown[]): boolean {
  return contained.every((wanted) =>
    wanted !== null && typeof wanted === "object"
      ? container.some((element) => element !== null && typeof element === "object" && containsValue(element, wanted))
      : container.some((element) => element === wanted),
  );
}
