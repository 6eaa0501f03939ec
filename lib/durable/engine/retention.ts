// STUB (issue 14): retention. The interface create-durable.ts calls:
import type { Duration } from "../duration";
import type { DurableDb } from "../store";

export interface RetentionOptions {
  /** Step rows, signals and stream chunks of terminal runs finished longer ago than this. */
  steps?: Duration;
  /** Run rows of terminal runs finished longer ago than this ("never": keep them). */
  runs?: Duration | "never";
  /** Events older than this. */
  events?: Duration;
}

export interface CompactReport {
  runsCompacted: number;
  runsDeleted: number;
  eventsDeleted: number;
  /** Whether rows were left for the next slice (the limit or the time ran out). */
  more: boolean;
}

export interface Compactor {
  /** A tick's bounded slice (rows and milliseconds); does nothing without retention. */
  slice(): Promise<CompactReport | null>;
  /** As much as `limit` rows of each kind, from a script. */
  compact(options?: { limit?: number }): Promise<CompactReport>;
}

export function createCompactor(_deps: {
  db: DurableDb;
  retention: RetentionOptions | undefined;
  log: (message: string) => void;
}): Compactor {
  const none = { runsCompacted: 0, runsDeleted: 0, eventsDeleted: 0, more: false };
  return { slice: async () => null, compact: async () => none };
}
