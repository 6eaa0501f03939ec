import type { SseEvent } from "./sse-parser";
import type { RunStatusValue } from "../schemas";
import type { RunStreamChunk, RunStreamState } from "./types";

/**
 * What a stream reader has kept of a run's stream (docs/model.md, "Run streams"): the chunks in
 * seq order and each step's text. A broken chunk is dropped, and so is a step's earlier attempt
 * once a later attempt streams. It also holds the last seq read, which is where a reconnect
 * resumes, so no seq is ever applied twice whatever a reconnect sends.
 */
export class KeptChunks {
  private kept: RunStreamChunk[] = [];
  private readonly texts = new Map<string, string>();
  private readonly attempts = new Map<string, number>();

  /** `from`: the last seq the reader already had (0: none). */
  constructor(public lastSeq: number) {}

  /** Takes one connection's events; answers the state they change, or null when they change nothing. */
  apply(events: SseEvent[]): Partial<RunStreamState> | null {
    let changed = false;
    let ended: RunStatusValue | null = null;
    for (const event of events) {
      if (event.type === "end") {
        ended = (parseJson(event.data) as { status?: RunStatusValue } | null)?.status ?? null;
        changed = true;
        break;
      }
      if (event.type !== "chunk") continue;
      const chunk = parseJson(event.data) as RunStreamChunk | null;
      // Never the same seq twice, whatever a reconnect sends.
      if (!chunk || typeof chunk.seq !== "number" || chunk.seq <= this.lastSeq) continue;
      this.lastSeq = chunk.seq;
      if (this.keep(chunk)) changed = true;
    }
    if (!changed) return null;
    const texts = new Map(this.texts);
    return {
      chunks: this.kept.slice(),
      text: [...texts.values()].join(""),
      textOf: (stepId) => texts.get(stepId) ?? "",
      ...(ended === null ? {} : { status: ended, done: true, error: null }),
    };
  }

  /** Keeps a chunk unless it is broken or of an earlier attempt; a later attempt drops the step's earlier ones. */
  private keep(chunk: RunStreamChunk): boolean {
    const top = this.attempts.get(chunk.stepId) ?? 0;
    if (chunk.attempt < top) return false;
    let changed = false;
    if (chunk.attempt > top) {
      this.attempts.set(chunk.stepId, chunk.attempt);
      if (this.texts.has(chunk.stepId)) {
        // The earlier attempt did not complete: its chunks are broken now (docs/model.md, "Run streams").
        this.kept = this.kept.filter((c) => c.stepId !== chunk.stepId);
        this.texts.set(chunk.stepId, "");
        changed = true;
      }
    }
    if (chunk.broken) return changed;
    this.kept.push(chunk);
    const text = typeof chunk.data === "string" ? chunk.data : "";
    this.texts.set(chunk.stepId, (this.texts.get(chunk.stepId) ?? "") + text);
    return true;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
