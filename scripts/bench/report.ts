// Printing and summary statistics for the bench.

export function table(rows: string[][]): void {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  rows.forEach((row, i) => {
    console.log(
      "  " +
        row
          .map((cell, c) => cell.padEnd(widths[c]!))
          .join("  ")
          .trimEnd(),
    );
    if (i === 0) console.log(`  ${widths.map((w) => "-".repeat(w)).join("  ")}`);
  });
}

export function heading(title: string): void {
  console.log(`\n${title}\n`);
}

/** Nearest-rank percentile of `samples` (ms), p in 0..100. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export const ms = (v: number) => `${v < 10 ? v.toFixed(2) : v.toFixed(1)} ms`;
export const ratio = (v: number) => `${v.toFixed(2)}×`;
export const perSecond = (v: number) => `${Math.round(v).toLocaleString("en-US")}/s`;
