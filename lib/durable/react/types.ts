// The options, states and errors the hooks and their loops share (docs/layout.md, "The folders").
// Only types come from the rest of the toolkit: this folder is bundled for the browser, which must
// not get zod, Kysely or node:crypto.
import type { RunStatus, RunStatusValue } from "../schemas";
import type { StreamChunk } from "../store";

export interface RunPollOptions {
  /** The run's status token (`durable.statusToken(id)` on the server). Never the admin secret. */
  token: string;
  /** A status the server already read: shown at once, first poll after `minDelayMs`. */
  initial?: RunStatus | null;
  /** Where the status route is mounted ("/api/durable/runs"). */
  endpoint?: string;
  minDelayMs?: number;
  maxDelayMs?: number;
  fetch?: typeof fetch;
  /** Is the page hidden now? (the document's visibility; tests pass their own) */
  isHidden?: () => boolean;
}

export interface RunPollState {
  run: RunStatus | null;
  /** The last poll's failure; cleared by the next success. The last good `run` is kept. */
  error: RunPollError | null;
  /** True until the first status is known. */
  isLoading: boolean;
}

/** A failed poll: `status` is the HTTP status (0 when the request itself failed). */
export class RunPollError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "RunPollError";
  }
}

/** One chunk of a run's stream, as the stream route sends it. */
export type RunStreamChunk = StreamChunk;

export interface RunStreamOptions {
  /** The run's status token (`durable.statusToken(id)` on the server). Never the admin secret. */
  token: string;
  /** Where the durable routes are mounted ("/api/durable"; an absolute URL for another origin). */
  baseUrl?: string;
  /** The last seq the reader already has: only the chunks after it come (0, all of them). */
  from?: number;
  /** The first wait before reconnecting after a failure (1000 ms); it doubles up to `maxDelayMs` (5000). */
  minDelayMs?: number;
  maxDelayMs?: number;
  fetch?: typeof fetch;
}

export interface RunStreamState {
  /** The chunks kept so far, in seq order: without broken ones and without earlier attempts of a step. */
  chunks: RunStreamChunk[];
  /** The string `data` of the kept chunks, step after step (in the order each step first streamed). */
  text: string;
  /** One step's text: the string `data` of its kept chunks, in order ("" when none). */
  textOf: (stepId: string) => string;
  /** The run's status from the `end` event; null until then. */
  status: RunStatusValue | null;
  /** True once the `end` event came: the run is terminal and every chunk was read. */
  done: boolean;
  /** The last connection's failure; cleared by the next answer. The chunks read so far are kept. */
  error: RunStreamError | null;
}

/** A failed stream connection: `status` is the HTTP status (0 when the request or the body failed). */
export class RunStreamError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "RunStreamError";
  }
}

/** The state before the first chunk. */
export const emptyStreamState = (): RunStreamState => ({
  chunks: [],
  text: "",
  textOf: () => "",
  status: null,
  done: false,
  error: null,
});
