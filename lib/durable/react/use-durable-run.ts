import { useCallback, useEffect, useRef, useState } from "react";
import { RunPoller } from "./run-poller";
import type { RunPollOptions, RunPollState } from "./types";

/**
 * Live status of one run, for a client component: `RunPoller` (`./run-poller.ts`) polls the
 * status route while the run is not finished; this hook starts it on mount, pauses it with the
 * tab's visibility, and stops it on unmount or when the id, token or delays change.
 *
 * @example
 * "use client";
 * import { useDurableRun } from "@/lib/durable/react";
 *
 * export function RunProgress({ id, token }: { id: string; token: string }) {
 *   const { run, error, isLoading } = useDurableRun(id, { token });
 *   if (isLoading) return <p>Loading…</p>;
 *   if (!run) return <p>{error?.message}</p>;
 *   return <p>{run.status}: {run.steps.filter((s) => s.status === "completed").length} steps done</p>;
 * }
 */
export function useDurableRun(id: string, options: RunPollOptions): RunPollState & { refresh: () => void } {
  const [state, setState] = useState<RunPollState>(() => new RunPoller(id, options).state);
  const poller = useRef<RunPoller | null>(null);
  // The latest options without restarting the loop on every render (objects are new each time).
  const latest = useRef(options);
  latest.current = options;
  const { token, endpoint, minDelayMs, maxDelayMs } = options;

  useEffect(() => {
    const current = new RunPoller(id, { ...latest.current, token, endpoint, minDelayMs, maxDelayMs }, setState);
    poller.current = current;
    setState(current.state);
    const onVisibility = () => current.visibilityChanged();
    document.addEventListener("visibilitychange", onVisibility);
    current.start();
    return () => {
      document.removeEventListener("visibilitychange", onVisibility);
      current.stop();
    };
  }, [id, token, endpoint, minDelayMs, maxDelayMs]);

  const refresh = useCallback(() => poller.current?.refresh(), []);
  return { ...state, refresh };
}
