// Flow control (docs/guide/flow-control.md): a workflow's rateLimit, debounce and priority are
// checked when it is defined, and turned into what a run stores at start (its rate key, debounce
// key and priority) and what every claim passes (each workflow's rate limit).
import { toBoundedMs } from "../duration";
import { InvalidInputError } from "../errors";
import { isStorableName } from "../names";
import type { AnyWorkflow } from "../types";

/** The bounds a rate limit, a debounce and a priority are checked against. */
export const FLOW_LIMITS = {
  /** The claim reads up to `limit` entries of a key's window: it stays small. */
  maxRateLimit: 10_000,
  minPeriodMs: 10,
  maxPeriodMs: 30 * 86_400_000,
  /** A priority is stored as a PostgreSQL integer. */
  minPriority: -2_147_483_648,
  maxPriority: 2_147_483_647,
} as const;

/** What the claim takes for one workflow's rate limit. */
export interface RateLimitParameter {
  limit: number;
  periodMs: number;
}

/** Refuses a rateLimit, debounce or priority that cannot be honoured (InvalidInputError). */
export function validateFlowControl(workflow: AnyWorkflow): void {
  const name = `workflow "${workflow.name}"`;
  const { rateLimit, debounce, priority } = workflow;
  if (rateLimit !== undefined) {
    const { limit } = rateLimit ?? {};
    if (
      (rateLimit?.key !== undefined && typeof rateLimit.key !== "function") ||
      !Number.isInteger(limit) ||
      limit < 1 ||
      limit > FLOW_LIMITS.maxRateLimit
    ) {
      throw new InvalidInputError(
        `${name}: rateLimit is { key?: (input) => string, limit: an integer from 1 to ${FLOW_LIMITS.maxRateLimit}, ` +
          "period }",
      );
    }
    periodMs(rateLimit.period, `${name}: rateLimit.period`);
  }
  if (debounce !== undefined) {
    if (typeof debounce?.key !== "function") {
      throw new InvalidInputError(`${name}: debounce is { key: (input) => string, period, maxWait? }`);
    }
    const period = periodMs(debounce.period, `${name}: debounce.period`);
    if (debounce.maxWait !== undefined && periodMs(debounce.maxWait, `${name}: debounce.maxWait`) < period) {
      throw new InvalidInputError(`${name}: debounce.maxWait is at least debounce.period`);
    }
  }
  if (priority !== undefined && typeof priority !== "function") {
    throw new InvalidInputError(`${name}: priority is a function (input) => integer`);
  }
}

/** A period in milliseconds, from 10 ms to 30 days. */
function periodMs(period: unknown, what: string): number {
  const ms = toBoundedMs(period as string, what);
  if (ms < FLOW_LIMITS.minPeriodMs || ms > FLOW_LIMITS.maxPeriodMs) {
    throw new InvalidInputError(`${what} is from 10ms to 30d`);
  }
  return ms;
}

/** Each registered workflow's rate limit, as every claim passes it. */
export function rateLimitsOf(workflows: Iterable<AnyWorkflow>): Record<string, RateLimitParameter> {
  const rates: Record<string, RateLimitParameter> = {};
  for (const workflow of workflows) {
    if (workflow.rateLimit) {
      rates[workflow.name] = { limit: workflow.rateLimit.limit, periodMs: toBoundedMs(workflow.rateLimit.period) };
    }
  }
  return rates;
}

/** What a new run stores for flow control, from its parsed input and the start's options. */
export interface FlowFields {
  /** '' when the rate limit has no key (the whole workflow); null when there is no rate limit. */
  rateKey: string | null;
  debounceKey: string | null;
  priority: number;
}

/** A run's flow-control fields (InvalidInputError for a key or priority that cannot be stored). */
export function flowFieldsOf(workflow: AnyWorkflow, input: unknown, priority: number | undefined): FlowFields {
  const given = priority ?? (workflow.priority ? workflow.priority(input) : 0);
  return {
    rateKey: workflow.rateLimit ? (workflow.rateLimit.key ? keyOf(workflow, "rateLimit", input) : "") : null,
    debounceKey: workflow.debounce ? keyOf(workflow, "debounce", input) : null,
    priority: checkPriority(
      given,
      priority === undefined ? `workflow "${workflow.name}": priority(input)` : "priority",
    ),
  };
}

/** A priority: an integer a PostgreSQL integer holds. */
export function checkPriority(value: unknown, what = "priority"): number {
  if (
    typeof value !== "number" ||
    !Number.isInteger(value) ||
    value < FLOW_LIMITS.minPriority ||
    value > FLOW_LIMITS.maxPriority
  ) {
    throw new InvalidInputError(
      `${what} is an integer from ${FLOW_LIMITS.minPriority} to ${FLOW_LIMITS.maxPriority} (got ${String(value)})`,
    );
  }
  return value;
}

function keyOf(workflow: AnyWorkflow, option: "rateLimit" | "debounce", input: unknown): string {
  const key = (workflow[option]!.key as (input: unknown) => unknown)(input);
  if (typeof key !== "string" || !isStorableName(key)) {
    throw new InvalidInputError(
      `workflow "${workflow.name}": ${option}.key must return a string of 1 to 255 characters, ` +
        "without NUL or a lone surrogate",
    );
  }
  return key;
}

/** The debounce of a workflow in milliseconds, as `insertRun` takes it. */
export function debounceOf(workflow: AnyWorkflow): { periodMs: number; maxWaitMs: number | null } | null {
  if (!workflow.debounce) return null;
  const { period, maxWait } = workflow.debounce;
  return { periodMs: toBoundedMs(period), maxWaitMs: maxWait === undefined ? null : toBoundedMs(maxWait) };
}
