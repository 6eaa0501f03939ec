// The filter of `list`, `cancelMany` and `retryMany` (docs/guide/runs.md, "Finding runs"): checked
// whole before anything is read or written, so a typo, a value gone missing or one JSON cannot
// carry never widens what a bulk action touches.
import { toInstant } from "../duration";
import { InvalidInputError } from "../errors";
import { storableName } from "../names";
import { runStatusValues } from "../schemas";
import { narrowsRuns, type RunQuery } from "../store";
import type { RunState } from "../types";
import type { RunFilterOptions } from "./durable-api";
import { patchMarkerId } from "./run/patches";
import { checkTag, jsonObject, MAX_METADATA_BYTES } from "./run/run-metadata";

const FILTER_KEYS = new Set([
  "status",
  "workflow",
  "version",
  "tag",
  "parentId",
  "metadata",
  "createdAfter",
  "createdBefore",
  "beforePatch",
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
  if (given.beforePatch !== undefined) query.beforePatch = patchMarkerId(given.beforePatch, `${what}: beforePatch`);
  return query;
}

/** Whether a filter names anything: a condition the store would write (store/list-runs.ts, narrowsRuns). */
export const namesAnything = (query: RunQuery): boolean => narrowsRuns(query);

/**
 * A filter of `cancelMany` or `retryMany` (docs/guide/runs.md, "Acting on many runs"): `list`'s,
 * without `limit` and `cursor`, where every field given names something. A field whose value is
 * `undefined` is refused, not dropped (`{ status: "waiting", tag: batchTag }` with `batchTag`
 * missing would act on every waiting run), and so is a filter that names nothing once checked.
 * @throws InvalidInputError naming the field, or saying the filter names nothing
 */
export function checkBulkFilter(filter: unknown, what: string): RunQuery {
  const query = checkRunFilter(filter, what);
  for (const [field, value] of Object.entries(filter ?? {})) {
    if (value === undefined) {
      throw new InvalidInputError(
        `${what}: ${field} is undefined; a bulk filter names every field it has ` +
          `(leave ${field} out to act whatever it is)`,
      );
    }
  }
  if (!namesAnything(query)) {
    throw new InvalidInputError(`${what}: the filter names nothing; name a status to act on every run of it`);
  }
  return query;
}

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

/**
 * A metadata filter: a JSON object of at least one key, each value one JSON keeps as written. A
 * value it would drop or write as null or `{}` (undefined, a function, a symbol, NaN, a Map…)
 * would name nothing or something else, so it is refused wherever it is, naming its path.
 */
function metadataFilter(value: unknown, what: string): Record<string, unknown> {
  const parsed = jsonObject(value, `${what}: metadata`);
  if (Buffer.byteLength(JSON.stringify(parsed), "utf8") > MAX_METADATA_BYTES) {
    throw new InvalidInputError(`${what}: a metadata filter is at most ${MAX_METADATA_BYTES} bytes of JSON`);
  }
  checkJsonValues(value, "metadata", what);
  if (Object.keys(parsed).length === 0) {
    throw new InvalidInputError(`${what}: the metadata filter names no key; name a key and its value, or leave it out`);
  }
  return parsed;
}

/** Refuses a value (at any depth) that JSON would not keep as written: jsonObject already refused cycles. */
function checkJsonValues(value: unknown, path: string, what: string): void {
  const lost = lostInJson(value);
  if (lost) {
    throw new InvalidInputError(
      `${what}: ${path} is ${lost}, which JSON cannot carry; a metadata filter's values are JSON ` +
        "(leave the key out not to filter on it)",
    );
  }
  if (value === null || typeof value !== "object" || typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) checkJsonValues(value[i], `${path}[${i}]`, what);
  } else {
    for (const [key, inner] of Object.entries(value)) checkJsonValues(inner, `${path}.${key}`, what);
  }
}

function lostInJson(value: unknown): string | null {
  if (value === undefined) return "undefined";
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol") return "a symbol";
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  if (value instanceof Map || value instanceof Set) return `a ${value instanceof Map ? "Map" : "Set"}`;
  return null;
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
