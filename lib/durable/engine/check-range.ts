import { InvalidInputError } from "../errors";

/**
 * `value` when it is a whole number from `min` to `max` (no upper bound when `max` is omitted);
 * else an InvalidInputError that names the option: "limit is an integer from 1 to 200", "after is
 * a whole number >= 0". `noun` keeps each option's wording as the API has always answered it.
 */
export function checkRange(
  name: string,
  value: number,
  min: number,
  max?: number,
  noun: "integer" | "whole number" = "integer",
): number {
  if (!Number.isSafeInteger(value) || value < min || (max !== undefined && value > max)) {
    const article = noun === "integer" ? "an" : "a";
    const range = max === undefined ? `>= ${min}` : `from ${min} to ${max}`;
    throw new InvalidInputError(`${name} is ${article} ${noun} ${range}`);
  }
  return value;
}
