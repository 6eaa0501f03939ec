import { useEffect, useRef, useState } from "react";
import { RunStreamReader } from "./run-stream-reader";
import { emptyStreamState, type RunStreamOptions, type RunStreamState } from "./types";

/**
 * A run's stream, live, for a client component: the chunks kept so far and their text, until the
 * run is terminal (`RunStreamReader`, `./run-stream-reader.ts`, reads and reconnects). Broken
 * chunks are dropped, and so are a step's earlier attempts once a later attempt streams. A step
 * that fails on its last attempt keeps its chunks here (they are marked broken only on a later
 * read): `status` says the run failed (docs/model.md, "Run streams").
 *
 * @example
 * "use client";
 * import { useDurableStream } from "@/lib/durable/react";
 *
 * export function Answer({ id, token }: { id: string; token: string }) {
 *   const { text, done, error } = useDurableStream(id, { token });
 *   return <p>{text}{done ? "" : "▍"}{error ? ` (${error.message}, reconnecting)` : ""}</p>;
 * }
 */
export function useDurableStream(id: string, options: RunStreamOptions): RunStreamState {
  const [state, setState] = useState<RunStreamState>(emptyStreamState);
  // The latest options without reconnecting on every render (objects are new each time).
  const latest = useRef(options);
  latest.current = options;
  const { token, baseUrl, from, minDelayMs, maxDelayMs } = options;

  useEffect(() => {
    const reader = new RunStreamReader(
      id,
      { ...latest.current, token, baseUrl, from, minDelayMs, maxDelayMs },
      setState,
    );
    setState(reader.state);
    reader.start();
    return () => reader.stop();
  }, [id, token, baseUrl, from, minDelayMs, maxDelayMs]);

  return state;
}
