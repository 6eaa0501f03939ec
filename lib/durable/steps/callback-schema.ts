// What a callback's delivery can check without the zod schema (docs/guide/composition.md, "Callback
// URLs"): the payload's JSON Schema, written with the callback's row, checks a delivery only when it
// accepts exactly what zod accepts. A schema with a part JSON Schema cannot say (a coercion, a
// transform, a refine) is checked at delivery with zod itself, which only a schema the workflow
// declares (`defineWorkflow({ callbacks })`) lets the delivering process find.
import * as z from "zod";

/** Its JSON Schema when that accepts exactly what the schema accepts; else why it cannot. */
export type DeliveryCheck = { exact: true; json: unknown } | { exact: false; why: string };

/** Nodes whose JSON Schema accepts what they accept, their inner schemas permitting. */
const EXACT_TYPES = new Set([
  "string",
  "number",
  "boolean",
  "null",
  "literal",
  "enum",
  "object",
  "array",
  "tuple",
  "union",
  "optional",
  "nullable",
  "record",
  "unknown",
  "any",
  "readonly",
  // Accepts a missing value, as JSON Schema's not-required property does; the default is output.
  "default",
  "prefault",
]);

/** Checks JSON Schema states as zod does; the rest (refine, trim and other overwrites) it cannot. */
const EXACT_CHECKS = new Set([
  "less_than",
  "greater_than",
  "multiple_of",
  "number_format",
  "min_length",
  "max_length",
  "length_equals",
  "min_size",
  "max_size",
  "size_equals",
  "string_format",
]);

/** What a node is, for the error that names it. */
const WHAT: Record<string, string> = {
  pipe: "a transform, preprocess or pipe",
  transform: "a transform",
  catch: "a catch",
  custom: "z.custom",
  lazy: "z.lazy",
  date: "z.date",
  intersection: "an intersection",
};

/** The payload's JSON Schema for the callback's row when it checks exactly what `schema` does. */
export function deliveryCheckOf(schema: z.ZodType): DeliveryCheck {
  const why = inexactPart(schema, new Set());
  if (why !== null) return { exact: false, why };
  try {
    return { exact: true, json: z.toJSONSchema(schema, { io: "input", unrepresentable: "throw" }) };
  } catch {
    return { exact: false, why: "a part JSON Schema cannot say" };
  }
}

/** The first part of `schema` JSON Schema cannot check as zod does; null when there is none. */
function inexactPart(schema: z.ZodType, seen: Set<unknown>): string | null {
  if (seen.has(schema)) return null;
  seen.add(schema);
  const def = (schema as unknown as { _zod: { def: Record<string, any> } })._zod.def;
  const type = String(def.type);
  if (!EXACT_TYPES.has(type)) return WHAT[type] ?? `z.${type}`;
  if (def.coerce === true) return `z.coerce.${type}`;
  for (const check of (def.checks ?? []) as { _zod: { def: { check: string; format?: string; pattern?: RegExp } } }[]) {
    const { check: kind, format, pattern } = check._zod.def;
    if (!EXACT_CHECKS.has(kind)) return kind === "custom" ? "a refine" : `a ${kind} check`;
    if (format === "regex" && pattern?.flags) return `a regex with flags (/${pattern.source}/${pattern.flags})`;
  }
  const inner: unknown[] = [
    def.innerType,
    def.element,
    def.keyType,
    def.valueType,
    def.rest,
    ...Object.values((def.shape ?? {}) as Record<string, unknown>),
    ...((def.options ?? []) as unknown[]),
    ...((def.items ?? []) as unknown[]),
  ];
  const catchall = def.catchall as z.ZodType | undefined;
  if (catchall && !["never", "unknown", "any"].includes(String(catchall._zod.def.type))) inner.push(catchall);
  for (const part of inner) {
    if (part === undefined || part === null) continue;
    const why = inexactPart(part as z.ZodType, seen);
    if (why !== null) return why;
  }
  return null;
}
