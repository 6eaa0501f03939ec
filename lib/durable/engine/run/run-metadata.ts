// Tags and metadata (docs/guide/runs.md, "Tags and metadata"): a start's tags are checked here,
// and `ctx.setMetadata` keeps its patches here until the next write carries them.
import { InvalidInputError } from "../../errors";
import { toJsonText } from "../../json";
import { hasUnstorableText } from "../../text";

export const MAX_TAGS = 10;
export const MAX_TAG_LENGTH = 64;
/** The run's whole metadata, as JSON text, after merging: 4 KiB. */
export const MAX_METADATA_BYTES = 4096;

/** A start's tags: at most 10, each 1–64 characters without NUL or a lone surrogate; repeats dropped. */
export function checkTags(tags: unknown): string[] {
  if (tags === undefined) return [];
  if (!Array.isArray(tags)) throw new InvalidInputError("tags is an array of strings");
  for (const tag of tags) checkTag(tag, "a tag");
  const unique = [...new Set(tags as string[])];
  if (unique.length > MAX_TAGS) throw new InvalidInputError(`a run has at most ${MAX_TAGS} tags, not ${unique.length}`);
  return unique;
}

/** One tag, as a start stores it and a filter names it. */
export function checkTag(tag: unknown, what: string): string {
  if (typeof tag !== "string" || tag.length < 1 || tag.length > MAX_TAG_LENGTH || hasUnstorableText(tag)) {
    throw new InvalidInputError(
      `${what} is a string of 1 to ${MAX_TAG_LENGTH} characters without NUL or a lone surrogate` +
        (typeof tag === "string" ? `, not ${JSON.stringify(tag.slice(0, 80))}` : `, not ${typeof tag}`),
    );
  }
  return tag;
}

/** A plain JSON object (a metadata patch, a metadata filter), as it will be stored: after the JSON round trip. */
export function jsonObject(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidInputError(`${what} is a JSON object`);
  }
  const text = toJsonText(value, { limit: MAX_METADATA_BYTES * 4 });
  const parsed: unknown = JSON.parse(text);
  // A toJSON of its own (a Date, a class) may write something else: what is stored must be an object.
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new InvalidInputError(`${what} is a JSON object, not one whose JSON is ${text.slice(0, 40)}`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * The run's metadata as this execution's body has set it, and the patches no write has carried
 * yet. It starts empty, not from the stored value the claim read: a run's metadata starts empty
 * (a fork's too) and only its body patches it, so a replay sets every earlier patch again in the
 * same order, and each call is checked against what the first execution had merged at that call
 * (docs/rules.md, rule 13). Checked against the stored final value, a replay could refuse a patch
 * the first execution took (a key that shrank later, another that grew). Once the replay passes
 * the last patch written, this copy equals the stored value, and the next write merges the same.
 */
export class RunMetadata {
  private current: Record<string, unknown> = {};
  private pending: Record<string, unknown> | null = null;

  /**
   * Merges `patch` (a JSON object; its keys replace the stored ones) for the next write.
   * @throws InvalidInputError when it is not a JSON object, or the merged metadata is over 4 KiB
   */
  set(patch: unknown): void {
    const parsed = jsonObject(patch, "ctx.setMetadata's patch");
    const merged = { ...this.current, ...parsed };
    const bytes = Buffer.byteLength(JSON.stringify(merged), "utf8");
    if (bytes > MAX_METADATA_BYTES) {
      throw new InvalidInputError(
        `a run's metadata is at most ${MAX_METADATA_BYTES} bytes of JSON in all; with this patch it would be ${bytes}`,
      );
    }
    this.current = merged;
    this.pending = { ...this.pending, ...parsed };
  }

  /** The patches since the last write, for the write about to be sent (null: none). */
  take(): Record<string, unknown> | null {
    const pending = this.pending;
    this.pending = null;
    return pending;
  }
}
