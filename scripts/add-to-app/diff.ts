// A unified line diff (Myers' O(ND) algorithm), enough to show what --update did not apply to a
// file the app changed. No dependency: the output reads like `diff -u`, and `git apply` takes it.

type Op = { kind: " " | "-" | "+"; line: string };

/** Lines with their terminators: a last line without "\n" differs from the same line with one. */
function splitLines(text: string): string[] {
  const lines = text.split(/(?<=\n)/);
  return lines.length === 1 && lines[0] === "" ? [] : lines;
}

/** Past this many differing lines the shortest script is not worth its memory: all out, all in. */
const MAX_EDITS = 4000;

function editScript(a: string[], b: string[]): Op[] {
  // Common head and tail first: most files differ in a few places, so the search stays small.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const same = (lines: string[]) => lines.map((line): Op => ({ kind: " ", line }));
  const x0 = a.slice(head, a.length - tail);
  const y0 = b.slice(head, b.length - tail);
  return [...same(a.slice(0, head)), ...middle(x0, y0), ...same(a.slice(a.length - tail))];
}

function middle(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const replaceAll = (): Op[] => [
    ...a.map((line): Op => ({ kind: "-", line })),
    ...b.map((line): Op => ({ kind: "+", line })),
  ];
  if (n === 0 || m === 0) return replaceAll();
  const max = Math.min(n + m, MAX_EDITS);
  // v[k] is the furthest x reached on diagonal k = x - y; trace[d] holds v (diagonals -d-1..d+1) before round d.
  const v = new Map<number, number>([[1, 0]]);
  const trace: Map<number, number>[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(new Map(v));
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && v.get(k - 1)! < v.get(k + 1)!);
      let x = down ? v.get(k + 1)! : v.get(k - 1)! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v.set(k, x);
      if (x >= n && y >= m) return backtrack(a, b, trace);
    }
  }
  return replaceAll();
}

function backtrack(a: string[], b: string[], trace: Map<number, number>[]): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d]!;
    const k = x - y;
    const down = k === -d || (k !== d && v.get(k - 1)! < v.get(k + 1)!);
    const prevK = down ? k + 1 : k - 1;
    const prevX = v.get(prevK)!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: " ", line: a[--x]! });
      y--;
    }
    if (d > 0) {
      if (down) ops.push({ kind: "+", line: b[--y]! });
      else ops.push({ kind: "-", line: a[--x]! });
    }
  }
  return ops.reverse();
}

const range = (start: number, count: number) => (count === 1 ? `${start}` : `${start},${count}`);

/**
 * `diff -u` of two texts, "" when they are equal. `from` and `to` label the two sides
 * (paths, as git would print them).
 */
export function unifiedDiff(before: string, after: string, from: string, to: string, context = 3): string {
  if (before === after) return "";
  const ops = editScript(splitLines(before), splitLines(after));
  // Index ranges of ops to print: every change with `context` unchanged lines around it, merged when they touch.
  const spans: [number, number][] = [];
  for (const [i, op] of ops.entries()) {
    if (op.kind === " ") continue;
    const start = Math.max(0, i - context);
    const end = Math.min(ops.length, i + context + 1);
    const last = spans.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else spans.push([start, end]);
  }
  const out = [`--- ${from}`, `+++ ${to}`];
  // Line numbers (1-based) of the next old and new line, advanced as ops go by.
  let oldLine = 1;
  let newLine = 1;
  let at = 0;
  for (const [start, end] of spans) {
    for (; at < start; at++) {
      oldLine++;
      newLine++;
    }
    const hunk = ops.slice(start, end);
    const oldCount = hunk.filter((op) => op.kind !== "+").length;
    const newCount = hunk.filter((op) => op.kind !== "-").length;
    // An empty side names the line before the hunk, as diff -u does.
    const oldRange = range(oldCount === 0 ? oldLine - 1 : oldLine, oldCount);
    out.push(`@@ -${oldRange} +${range(newCount === 0 ? newLine - 1 : newLine, newCount)} @@`);
    for (const op of hunk) {
      out.push(`${op.kind}${op.line.replace(/\n$/, "")}`);
      if (!op.line.endsWith("\n")) out.push("\\ No newline at end of file");
      if (op.kind !== "+") oldLine++;
      if (op.kind !== "-") newLine++;
    }
    at = end;
  }
  return `${out.join("\n")}\n`;
}
