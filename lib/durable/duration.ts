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
  let ms: number | undefined;
  if (typeof d === "number") {
    if (Number.isFinite(d) && d >= 0) ms = d;
  } else if (typeof d === "string") {
    const match = DURATION_PATTERN.exec(d);
    if (match) ms = Number(match[1]) * MS_PER_UNIT[match[2] as keyof typeof MS_PER_UNIT];
  }
  if (ms === undefined || !(Math.round(ms) <= Number.MAX_SAFE_INTEGER)) {
    throw new InvalidInputError(`invalid ${what}: ${describe(d)}; expected ${ACCEPTED_FORM}`);
  }
  return Math.round(ms) + 0; // `+ 0` turns -0 into 0
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") {
    return String(value);
  }
  return value === null ? "null" : typeof value;
}
