// What Postgres can store of a JavaScript string. A JS string is any sequence of UTF-16 code units;
// Postgres text and jsonb hold Unicode text only. Two things a JS string may hold are not that:
// NUL (U+0000), which text cannot hold at all, and a lone surrogate (half of a pair, such as
// `"😀".slice(0, 1)`, or text cut to a length in the middle of an emoji), which jsonb refuses
// (`invalid input syntax for type json`) and a text parameter silently turns into U+FFFD (so
// `"a\ud800"` and `"a\udbff"` would be the same id). Ids and names with either are refused where
// they enter (names.ts); free text the toolkit writes on its own account (error names and
// messages) is made storable here (docs/decisions.md, "One name check").

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// The same, for replace(): a global regex keeps state between test() calls, so it gets its own.
const EVERY_LONE_SURROGATE = new RegExp(LONE_SURROGATE.source, "g");

/** Whether `value` holds a NUL or a lone surrogate: text Postgres cannot store as given. */
export function hasUnstorableText(value: string): boolean {
  return value.includes("\u0000") || LONE_SURROGATE.test(value);
}

/** `value` with each NUL and each lone surrogate replaced by U+FFFD, cut to `maxLength` characters. */
export function storableText(value: string, maxLength = Number.POSITIVE_INFINITY): string {
  const cut = value.length > maxLength ? `${value.slice(0, maxLength)}…` : value;
  return cut.replaceAll("\u0000", "\uFFFD").replace(EVERY_LONE_SURROGATE, "\uFFFD");
}
