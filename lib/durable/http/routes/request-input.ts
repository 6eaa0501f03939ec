import * as z from "zod";
import { InvalidInputError, RunNotFoundError } from "../../errors";
import { isStorableName, NAME_RULE } from "../../names";
import { HttpRefusal } from "./route-context";
import type { RunContext } from "./types";

// Reading what a request carries, each refusal before anything is changed: the body (capped), its
// JSON, the schema, and the run id in the path.

// The one name check (names.ts): a name Postgres could not store is a 422 here, never a 500.
export const storedName = z.string().refine(isStorableName, `must be ${NAME_RULE}`);

/** Reads the body, refusing it (413) as soon as it is larger than `limit`, without reading the rest. */
export async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  const tooLarge = () => new HttpRefusal(413, "payload_too_large", `the request body is larger than ${limit} bytes`);
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge();
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** UTF-8 JSON, or 400. An empty body is `empty` (undefined: refused where a body is required). */
export function parseJson(raw: Uint8Array, empty?: unknown): unknown {
  if (raw.byteLength === 0 && empty !== undefined) return empty;
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
  } catch {
    throw new HttpRefusal(400, "invalid_json", "the request body is not valid JSON");
  }
}

/** The value as `schema` reads it, or a 422 that lists the issues. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new InvalidInputError(`the ${what} is invalid`, { issues: parsed.error.issues });
  return parsed.data;
}

/** The path's run id; one that no run could have (empty, too long, NUL) is simply not found. */
export async function runIdOf(context: RunContext): Promise<string> {
  const { id } = await context.params;
  if (!isStorableName(id)) throw new RunNotFoundError(id);
  return id;
}

/**
 * A resume point a reader sent (`Last-Event-ID`, `?from=`): the last seq it has, a whole number,
 * or 400 naming `what`. The stream route and the chat routes read it alike.
 */
export function seqOf(value: string, what: string): number {
  const seq = /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(seq)) {
    throw new HttpRefusal(400, "invalid_resume_point", `${what} must be a whole number >= 0 (a seq)`);
  }
  return seq;
}
