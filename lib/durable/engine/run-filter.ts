// The filter of `list`, `cancelMany` and `retryMany` (docs/guide/runs.md, "Finding runs"): checked
// whole before anything is read or written, so a typo never widens what a bulk action touches.
import { toInstant } from "../duration";
import { InvalidInputError } from "../errors";
import { storableName } from "../names";
import { runStatusValues } from "../schemas";
import type { RunQuery } from "../store";
import type { RunState } from "../types";
import type { RunFilterOptions } from "./durable-api";
import { checkTag, jsonObject, MAX_METADATA_BYTES } from "./run-metadata";

const FILTER_KEYS = new Set([
  "status",
  "workflow",
  "version",
  "tag",
  "parentId",
  "metadata",
  "createdAfter",
  "createdBefore",
]);

/**
 * A filter as the store takes it. `extra` names the other keys the call takes (`limit`,
 * `cursor`); any other key is refused rather than ignored.
 * @throws InvalidInputError naming the first bad field
 */
export function checkRunFilter(filter: unknown, what: string, extra: readonly string[] = []): RunQuery {
  if (filter === undefined) return {};
  if (filter === null || typeof filter !== "object" || Array.isArray(filter)) {
    throw new InvalidInputError(`${what}: the filter is an object`);
  }
  const given = filter as RunFilterOptions & Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!FILTER_KEYS.has(key) && !extra.includes(key)) {
      throw new InvalidInputError(`${what}: unknown filter "${key}" (one of ${[...FILTER_KEYS].join(", ")})`);
    }
  }
  const query: RunQuery = {};
  if (given.status !== undefined) query.statuses = statuses(given.status, what);
  if (given.workflow !== undefined) query.workflow = one(given.workflow, "workflow", what);
  if (given.version !== undefined) query.version = one(given.version, "version", what);
  if (given.tag !== undefined) {
    if (Array.isArray(given.tag)) throw new InvalidInputError(`${what}: tag names one tag`);
    query.tag = checkTag(given.tag, `${what}: tag`);
  }
  if (given.parentId !== undefined) query.parentId = one(given.parentId, "parentId", what);
  if (given.metadata !== undefined) query.metadata = metadataFilter(given.metadata, what);
  if (given.createdAfter !== undefined) query.createdAfter = date(given.createdAfter, "createdAfter", what);
  if (given.createdBefore !== undefined) query.createdBefore = date(given.createdBefore, "createdBefore", what);
  return query;
}

/** Whether a filter names anything: a bulk action refuses one that would take every run. */
export const namesAnything = (query: RunQuery): boolean => Object.values(query).some((value) => value !== undefined);

function statuses(value: unknown, what: string): RunState[] {
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) throw new InvalidInputError(`${what}: status names at least one status`);
  for (const status of list) {
    if (!runStatusValues.safeParse(status).success) {
      throw new InvalidInputError(
        `${what}: status ${JSON.stringify(status)} is not one of ${runStatusValues.options.join(", ")}`,
      );
    }
  }
  return [...new Set(list as RunState[])];
}

function one(value: unknown, field: string, what: string): string {
  if (Array.isArray(value)) throw new InvalidInputError(`${what}: ${field} names one value, not ${value.length}`);
  return storableName(value, `${what}: ${field}`);
}

function metadataFilter(value: unknown, what: string): Record<string, unknown> {
  const parsed = jsonObject(value, `${what}: metadata`);
  if (Buffer.byteLength(JSON.stringify(parsed), "utf8") > MAX_METADATA_BYTES) {
    throw new InvalidInputError(`${what}: a metadata filter is at most ${MAX_METADATA_BYTES} bytes of JSON`);
  }
  return parsed;
}

/**
 * A Date or ISO 8601 text, moved into the range of instants the toolkit stores (docs/rules.md,
 * rule 19): every created_at lies inside it, so the filter answers the same.
 */
function date(value: unknown, field: string, what: string): Date {
  let ms = Number.NaN;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === "string" && /^\d{4}-\d{2}-\d{2}/.test(value)) ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new InvalidInputError(`${what}: ${field} is a Date or an ISO 8601 date, not ${JSON.stringify(value)}`);
  }
  return toInstant(ms, field);
}
