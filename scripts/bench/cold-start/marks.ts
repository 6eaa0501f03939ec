// What both cold-start entries share: the phase marks they print, `performance.now()` (ms since
// the process started, `performance.timeOrigin`) at each point, and how they run and exit.
export interface Marks {
  /** The first bundled line ran (a banner esbuild adds to each chunk; the first evaluated sets it): Node
   * itself has booted and read and compiled every statically imported chunk. */
  top: number;
  /** Every bundled module has been evaluated: the entry's own code starts. */
  imported: number;
  /** The database handle is ready to use. */
  connected: number;
  /** The one run (job) has completed. */
  ran: number;
  /** Pools closed. */
  closed: number;
}

/** The prefix of the line that carries the marks on stdout. */
export const MARKS_PREFIX = "cold-start-marks ";

declare global {
  var __coldStartTop: number | undefined;
}

/** Prints the marks as one line: MARKS_PREFIX, then JSON. */
export function printMarks(marks: Partial<Marks>): void {
  console.log(MARKS_PREFIX + JSON.stringify({ top: globalThis.__coldStartTop ?? 0, ...marks }));
}

/** Runs an entry's body (called once every module is evaluated), then exits: 0, or 1 on an error. */
export function runEntry(body: (marks: Partial<Marks>) => Promise<void>): void {
  const marks: Partial<Marks> = { imported: performance.now() };
  body(marks).then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
