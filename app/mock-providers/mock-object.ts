// The mock model's structured answers (app/mock-providers/model.ts): a value valid for a JSON schema,
// derived from the prompt, for `response_format` `json_schema` and for a tool call's arguments.
import { createHash } from "node:crypto";
import { answerFor, questionsFor } from "./mock-answers";

export type JsonSchema = Record<string, any>;

/** The words of a text, white space dropped. */
export const words = (text: string) => text.split(/\s+/).filter((w) => w.length > 0);

/** What every value of one object is derived from. */
interface Source {
  root: JsonSchema;
  prompt: string;
  echoes: boolean;
  /** The prompt's first words, for a value nothing else names. */
  snippet: string;
}

/**
 * A value valid for the JSON schema (the subset zod and the AI SDK emit: objects, arrays, strings
 * with formats and lengths, numbers with bounds, enums, consts, anyOf, $ref), derived from the prompt.
 * Unless `echoes`, a list of strings whose name ends in "questions" holds three (or as many as the
 * schema allows) sub-questions of the prompt's question, and any other string a sentence of the
 * answer to the prompt.
 */
export function objectFor(root: JsonSchema, prompt: string, echoes: boolean): unknown {
  const snippet = words(prompt).slice(0, 6).join(" ") || "nothing";
  return valueFor({ root, prompt, echoes, snippet }, root, "$", 0);
}

/** A number in [0, 1) from the seed and the path in the object: the same inputs, the same number. */
function unit(seed: string, path: string): number {
  return createHash("sha256").update(`${seed}\u0000${path}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** The schema a `$ref` points to, followed to the end; any other schema as it is. */
function resolve(source: Source, schema: JsonSchema): JsonSchema {
  if (typeof schema.$ref !== "string") return schema;
  const parts = schema.$ref.replace(/^#\//, "").split("/");
  return resolve(source, parts.reduce((node: any, key: string) => node?.[key], source.root) ?? {});
}

function valueFor(source: Source, raw: JsonSchema, path: string, depth: number): unknown {
  const { prompt } = source;
  const schema = resolve(source, raw);
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum[Math.floor(unit(prompt, path) * schema.enum.length)];
  }
  const options = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(options) && options.length > 0) {
    const usable = options.filter((o: JsonSchema) => resolve(source, o).type !== "null");
    return valueFor(source, usable[0] ?? options[0], path, depth);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) return valueFor(source, schema.allOf[0], path, depth);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types.find((t: unknown) => t !== "null") ?? (schema.properties ? "object" : types[0]);
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(schema.properties ?? {})) {
        out[key] = valueFor(source, child as JsonSchema, `${path}.${key}`, depth + 1);
      }
      return out;
    }
    case "array":
      return arrayFor(source, schema, path, depth);
    case "string":
      return stringFor(source, schema, path);
    case "integer":
    case "number": {
      const low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 0);
      const high = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : low + 100);
      const value = low + unit(prompt, path) * Math.max(0, high - low);
      return type === "integer" ? Math.min(Math.ceil(value), Math.floor(high)) : Math.round(value * 100) / 100;
    }
    case "boolean":
      return unit(prompt, path) < 0.5;
    case "null":
      return null;
    default:
      return source.snippet;
  }
}

function arrayFor(source: Source, schema: JsonSchema, path: string, depth: number): unknown[] {
  const min = typeof schema.minItems === "number" ? schema.minItems : 1;
  const max = typeof schema.maxItems === "number" ? schema.maxItems : Math.max(min, 2);
  const items = Array.isArray(schema.prefixItems) ? schema.prefixItems : null;
  if (!source.echoes && !items && /questions$/i.test(path) && resolve(source, schema.items ?? {}).type === "string") {
    return questionsFor(source.prompt, Math.min(max, Math.max(min, 3)));
  }
  const length = depth > 8 ? min : Math.min(max, Math.max(min, 2));
  return Array.from({ length: items ? items.length : length }, (_, i) =>
    valueFor(source, items ? items[i] : (schema.items ?? {}), `${path}[${i}]`, depth + 1),
  );
}

function stringFor({ prompt, echoes, snippet }: Source, schema: JsonSchema, path: string): string {
  switch (schema.format) {
    case "email":
      return "someone@example.com";
    case "date-time":
      return "2026-01-01T00:00:00.000Z";
    case "date":
      return "2026-01-01";
    case "time":
      return "00:00:00";
    case "uuid": {
      const hex = createHash("sha256").update(`${prompt}\u0000${path}`).digest("hex");
      const part = (from: number, to: number) => hex.slice(from, to);
      return `${part(0, 8)}-${part(8, 12)}-4${part(13, 16)}-8${part(17, 20)}-${part(20, 32)}`;
    }
    case "uri":
    case "url":
      return "https://example.com/mock";
  }
  // In prose, a string is a sentence of the answer to the prompt (the n-th for the n-th item of a
  // list). Echoing, an item of a list reads as a part of what the prompt ends with ("Part 2: …
  // from the top?"), and any other string as its key and the prompt's first words.
  const item = /\[(\d+)\]$/.exec(path);
  const key = path.split(/[.[]/).pop() || "value";
  let text: string;
  if (!echoes) {
    const sentences = answerFor(prompt).split(/(?<=\.)\s+/);
    text = sentences[(item ? Number(item[1]) : 0) % sentences.length] ?? "";
  } else {
    text = item
      ? `Part ${Number(item[1]) + 1}: ${words(prompt).slice(-7).join(" ") || "nothing"}`
      : `${key}: ${snippet}`;
  }
  if (typeof schema.maxLength === "number") text = text.slice(0, schema.maxLength);
  if (typeof schema.minLength === "number") text = text.padEnd(schema.minLength, ".");
  return text;
}
