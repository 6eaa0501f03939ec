import { InvalidInputError } from "./errors";
import type { Duration } from "./types";

export type { Duration };

const MS_PER_UNIT = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

// Strict on purpose: no spaces, no sign, no exponent, no bare number in a string ("10" could mean
// seconds to one reader and milliseconds to another), no "w"/"M" (months vs minutes).
const DURATION_PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

const ACCEPTED_FORM =
  "milliseconds (a finite number >= 0) or a string <number><unit> with unit ms, s, m, h or d " +
  '(e.g. "250ms", "1.5s", "30s", "5m", "24h", "7d")';

/**
 * Converts a {@link Duration} to whole milliseconds (rounded to the nearest integer).
 *
 * @param d - the duration to convert
 * @param what - what the duration is for (e.g. `"retryDelay"`), named in the error message
 * @throws InvalidInputError for anything that is not a finite non-negative number or a
 *   `<number><unit>` string, or whose value exceeds `Number.MAX_SAFE_INTEGER` milliseconds
 *
 * @example
 * toMs("1.5s", "retryDelay"); // 1500
 * toMs(250);                  // 250
 * toMs("5 m", "timeout");     // throws InvalidInputError: invalid timeout: "5 m"; expected ...
 */
export function toMs(d: Duration, what = "duration"): number {
  const ms = parseMs(d);
  if (ms === undefined || !(Math.round(ms) <= Number.MAX_SAFE_INTEGER)) throw invalid(d, what);
  return Math.round(ms) + 0; // `+ 0` turns -0 into 0
}

/** The milliseconds of a well-formed duration (finite, >= 0, not yet rounded); else undefined. */
function parseMs(d: Duration): number | undefined {
  let ms: number | undefined;
  if (typeof d === "number") {
    ms = d;
  } else if (typeof d === "string") {
    const match = DURATION_PATTERN.exec(d);
    if (match) ms = Number(match[1]) * MS_PER_UNIT[match[2] as keyof typeof MS_PER_UNIT];
  }
  return ms !== undefined && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

const invalid = (d: unknown, what: string) =>
  new InvalidInputError(`invalid ${what}: ${describe(d)}; expected ${ACCEPTED_FORM}`);

/**
 * The longest duration the toolkit counts: 1,000 years (docs/rules.md, rule 19). A longer sleep,
 * timeout, delay, deadline, ttl or lease counts as this long: never, in practice. It keeps every
 * time the database computes from its clock (now + a duration) inside the range below.
 */
export const MAX_DURATION_MS = 1_000 * 365.25 * 86_400_000;

/**
 * The instants the toolkit stores, from 1970-01-01 to 9999-01-01 (UTC): times JavaScript,
 * PostgreSQL and ISO 8601's four-digit years all hold, with a year to spare for a time the
 * database counts from its own clock (docs/rules.md, rule 19).
 */
export const MIN_INSTANT_MS = 0;
export const MAX_INSTANT_MS = Date.UTC(9999, 0, 1);

/**
 * The latest the database clock may be moved to (`testing.advanceClock`): the maximum instant less
 * the longest duration, so that now + any duration stays a time the toolkit stores.
 */
export const MAX_CLOCK_MS = MAX_INSTANT_MS - MAX_DURATION_MS;

/**
 * A duration as the toolkit counts it: {@link toMs}, but one longer than {@link MAX_DURATION_MS}
 * (up to `Number.MAX_VALUE`) counts as that, never an error. Every duration a user passes goes
 * through it (docs/rules.md, rule 19).
 *
 * @throws InvalidInputError for what is not a duration: negative, NaN, Infinity, malformed text
 *
 * @example
 * toBoundedMs("30s", "timeout");          // 30000
 * toBoundedMs(Number.MAX_VALUE, "timeout"); // MAX_DURATION_MS: never, in practice
 */
export function toBoundedMs(d: Duration, what = "duration"): number {
  const ms = parseMs(d);
  if (ms === undefined) throw invalid(d, what);
  return Math.min(Math.round(ms), MAX_DURATION_MS) + 0;
}

/**
 * A date as the toolkit stores it: a Date, ISO 8601 text or epoch milliseconds, moved into
 * [{@link MIN_INSTANT_MS}, {@link MAX_INSTANT_MS}] (a date after the maximum is the maximum:
 * never, in practice; one before 1970 is 1970: long past) (docs/rules.md, rule 19).
 *
 * @throws InvalidInputError naming `what` when `value` is no date (Invalid Date, NaN, bad text)
 *
 * @example
 * toInstant(new Date(8.64e15), "until"); // 9999-01-01T00:00:00.000Z
 * toInstant("soon", "until");            // throws InvalidInputError: until is not a date: "soon"
 */
export function toInstant(value: Date | string | number, what: string): Date {
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === "string"
        ? Date.parse(value)
        : typeof value === "number"
          ? value
          : Number.NaN;
  if (Number.isNaN(ms)) throw new InvalidInputError(`${what} is not a date: ${describe(value)}`);
  return new Date(Math.min(Math.max(ms, MIN_INSTANT_MS), MAX_INSTANT_MS));
}

/** The longest delay Node's timers take: past it they fire at once (after 1 ms). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timer {@link startTimer} started: `clear` stops it, `unref` lets the process exit before it. */
export interface Timer {
  clear(): void;
  unref(): void;
}

/**
 * `setTimeout` for any duration: a delay past Node's limit (about 24.8 days), which `setTimeout`
 * would fire at once, is waited in several turns (docs/rules.md, rule 19).
 */
export function startTimer(fn: () => void, ms: number): Timer {
  let left = Math.max(0, ms);
  let unref = false;
  let handle: ReturnType<typeof setTimeout>;
  const arm = () => {
    const turn = Math.min(left, MAX_TIMER_MS);
    left -= turn;
    handle = setTimeout(() => (left > 0 ? arm() : fn()), turn);
    if (unref) handle.unref?.();
  };
  arm();
  return {
    clear: () => clearTimeout(handle),
    unref: () => {
      unref = true;
      handle.unref?.();
    },
  };
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") {
    return String(value);
  }
  return value === null ? "null" : typeof value;
}
