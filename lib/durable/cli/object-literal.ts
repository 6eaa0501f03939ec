// Finds where an object literal ends in JavaScript or TypeScript source, without a parser (the
// package ships none): the braces are counted outside strings, template literals, comments and
// regular expressions. It is enough for a next.config, whose object create-next-app writes with
// nested objects (`turbopack: { rules: { … } }`), strings and, in some apps, a regex.

export interface ObjectEnd {
  /** Offset of the `}` that closes the object. */
  close: number;
  /** Offset of the last character before it that is code (not white space, not a comment). */
  lastCode: number;
}

/** Where a string, template or regex that starts at `at` (its opening quote) ends: after its closing quote. */
function skipQuoted(text: string, at: number): number {
  const quote = text[at]!;
  let i = at + 1;
  let inClass = false; // a regex's [...] may hold an unescaped "/"
  while (i < text.length) {
    const c = text[i]!;
    if (c === "\\") {
      i += 2;
      continue;
    }
    if (c === quote && !inClass) return i + 1;
    if (c === "\n" && quote !== "`") return i; // an unterminated string or regex: stop at the line
    if (quote === "/" && (c === "[" || c === "]")) inClass = c === "[";
    i++;
  }
  return i;
}

/** A `/` after one of these (or at the start) opens a regex; after a value it divides. */
const BEFORE_REGEX = new Set(["", "(", ",", "=", ":", "[", "!", "&", "|", "?", "{", "}", ";"]);

/**
 * The end of the object literal whose `{` is at `open`; null when the braces never balance (the
 * source is not what this reads, and the caller leaves the file alone).
 */
export function findObjectEnd(text: string, open: number): ObjectEnd | null {
  if (text[open] !== "{") return null;
  let depth = 0;
  let lastCode = open;
  let i = open;
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      i = end === -1 ? text.length : end;
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end === -1 ? text.length : end + 2;
    } else if (c === '"' || c === "'" || c === "`" || (c === "/" && BEFORE_REGEX.has(text[lastCode] ?? ""))) {
      lastCode = skipQuoted(text, i) - 1;
      i = lastCode + 1;
    } else if (/\s/.test(c)) {
      i++;
    } else {
      if (c === "{") depth++;
      else if (c === "}" && --depth === 0) return { close: i, lastCode };
      lastCode = i;
      i++;
    }
  }
  return null;
}
