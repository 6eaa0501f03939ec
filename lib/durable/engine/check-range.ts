import { MAX_DURATION_MS } from "../duration";
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

/**
 * A budget in milliseconds (`tick`, `advance`): a number, NaN refused; below 0 it is 0 (no time),
 * above the longest duration it is that (docs/rules.md, rule 19), so a lease taken from it is a
 * time the database stores.
 */
export function checkBudgetMs(value: unknown): number {
  if (typeof value !== "number" || Number.isNaN(value)) {
    throw new InvalidInputError(`budgetMs is a number of milliseconds, not ${String(value)}`);
  }
  return Math.min(Math.max(value, 0), MAX_DURATION_MS);
}
