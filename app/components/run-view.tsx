"use client";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { createContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import type { RunStatus } from "@/lib/durable";
import { isTerminal, useDurableRun } from "@/lib/durable/react";
import type { DemoInfo } from "../workflows/catalog";
import { AutoRefresh } from "./auto-refresh";
import { CallbackPanel, type CallbackView } from "./callback-panel";
import { JsonOutput } from "./json-output";
import { outcomeOf } from "./outcome";
import { RunActions, WaitingPanel } from "./run-controls";
import { RunFamily, type RunLink } from "./run-family";
import { RunTimeline, type TimelineEvent } from "./run-timeline";
import { RunHead } from "./run-head";
import { RunStats } from "./run-stats";
import type { CompositionFacts } from "./step-composition";

/**
 * The clock, ticking every second while `live`. Null on the server and before hydration, so it
 * also tells whether the client runs (and polls).
 */
function useNow(live: boolean): number | null {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    if (!live) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [live]);
  return now;
}

/**
 * The run as the page's poller last read it, and a way to read it again now: for the panels a
 * server component passes in (`live`), which are rendered inside this view.
 */
export const RunContext = createContext<{ run: RunStatus; refresh: () => void } | null>(null);

export interface RunViewProps {
  initial: RunStatus;
  /** When the server read `initial` (ms since the epoch): the page's clock until the browser's takes over. */
  renderedAt: number;
  /** The run's status token (never the admin secret): the hook polls the status route with it. */
  token: string;
  title: string;
  demo: DemoInfo | null;
  /** Server-rendered panel of the demo's own state (orders, provider requests…). */
  details: ReactNode;
  /** A panel across the page above the wait, for what the demo shows live (the research answer as it is written). */
  live?: ReactNode;
  /**
   * The run's events (`durable.events`), read by the server for this render. The page re-renders on
   * the server whenever the polled run moves, so a heal or a yield shows up without a reload.
   */
  events?: TimelineEvent[];
  /** The run's parent and children (docs/guide/dashboard.md, "Composition on the run page"). */
  family?: { parent: RunLink | null; children: RunLink[]; more: boolean };
  /** The run's callback URLs, read by the server as the admin (never part of RunStatus). */
  callbacks?: CallbackView[];
  /** Whether the callbacks get a form that POSTs to them (dev only). */
  callbackForm?: boolean;
  /** Whether the timeline offers "Fork from here" on its completed and failed steps. */
  forkable?: boolean;
}

const NO_FAMILY = { parent: null, children: [], more: false };

/** The run page: a live timeline kept current by useDurableRun. */
export function RunView(props: RunViewProps) {
  const { initial, renderedAt, token, title, demo, details, live, events = [] } = props;
  const { family = NO_FAMILY, callbacks = [], callbackForm = false, forkable = false } = props;
  const router = useRouter();
  const { run: polled, error, refresh } = useDurableRun(initial.id, { token, initial });
  const run = polled ?? initial;
  const terminal = isTerminal(run);
  const now = useNow(!terminal);

  // When the run moves, re-render the server-side panels too (the demo's orders, provider counts)
  // and read its events again: every event but a stale owner's late write moves the run.
  const seen = useRef(run.updatedAt);
  useEffect(() => {
    if (seen.current === run.updatedAt) return;
    seen.current = run.updatedAt;
    router.refresh();
  }, [run.updatedAt, router]);

  // What came of it, in the workflow's own words: a run can complete without doing what it was for.
  const outcome = run.status === "completed" ? outcomeOf(run.output, demo?.outcomes) : null;
  const origin = Date.parse(run.createdAt);
  // Before hydration (and without JavaScript) the clock is the server's, when it rendered the snapshot.
  const clock = now ?? renderedAt;
  const elapsed = (terminal ? Date.parse(run.updatedAt) : clock) - origin;
  const context = useMemo(() => ({ run, refresh }), [run, refresh]);
  const facts = useMemo(() => factsOf(family.children, callbacks), [family.children, callbacks]);
  // A child's end does not always move this run (a `start`ed child): re-read the page while one goes on.
  const childrenBusy = family.children.some((child) => !TERMINAL_STATUSES.has(child.status));

  return (
    <div className="run-page" data-run-status={run.status}>
      <nav className="crumbs">
        <Link href="/">← All runs</Link>
      </nav>
      <RunHead run={run} title={title} demo={demo} outcome={outcome} clock={clock} terminal={terminal} />

      <RunStats
        run={run}
        terminal={terminal}
        elapsed={elapsed}
        clientRunning={now !== null}
        error={error?.message ?? null}
      />

      <RunProblems run={run} />

      <RunContext value={context}>{live}</RunContext>
      <WaitingPanel run={run} now={clock} onChange={refresh} />
      <CallbackPanel
        callbacks={callbacks}
        status={run.status}
        now={clock}
        devForm={callbackForm}
        onDelivered={refresh}
      />

      <div className="run-columns">
        <section className="panel timeline-panel">
          <h2>{events.length > 0 ? "Steps and events" : "Steps"}</h2>
          {forkable ? (
            <p className="small">
              <a href={`/runs/${encodeURIComponent(run.id)}/ledger`} download data-testid="export-ledger">
                Export ledger
              </a>{" "}
              <span className="muted">(JSON, for replayTest)</span>
            </p>
          ) : null}
          <RunTimeline run={run} now={clock} events={events} facts={facts} forkable={forkable} />
        </section>
        <RunSide run={run} refresh={refresh} family={family} details={details} demo={demo} />
      </div>
      <AutoRefresh active={childrenBusy} />
    </div>
  );
}

/** The run's error and warnings, when it has them. */
function RunProblems({ run }: { run: RunStatus }) {
  return (
    <>
      {run.error ? (
        <section className="panel error-panel">
          <h2>Run failed</h2>
          <p>
            <code>{run.error.code}</code> {run.error.message}
          </p>
        </section>
      ) : null}
      {run.warnings.length > 0 ? (
        <section className="panel warning-panel">
          <h2>Warnings</h2>
          <ul>
            {run.warnings.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </section>
      ) : null}
    </>
  );
}

/** The side column: the actions, the run's family, metadata, output, the demo's panel and what it shows. */
function RunSide({
  run,
  refresh,
  family,
  details,
  demo,
}: {
  run: RunStatus;
  refresh: () => void;
  family: NonNullable<RunViewProps["family"]>;
  details: ReactNode;
  demo: DemoInfo | null;
}) {
  return (
    <aside className="run-side">
      <RunActions run={run} onChange={refresh} />
      <RunFamily parent={family.parent} kids={family.children} more={family.more} />
      {Object.keys(run.metadata ?? {}).length > 0 ? (
        <section className="panel" data-testid="run-metadata">
          <h2>Metadata</h2>
          <JsonOutput value={run.metadata} testId="metadata" />
          <p className="small muted">
            Set by the run with <code>ctx.setMetadata</code>; find runs by it with{" "}
            <code>durable.list({"{ metadata }"})</code>.
          </p>
        </section>
      ) : null}
      {run.status === "completed" ? (
        <section className="panel">
          <h2>Output</h2>
          <JsonOutput value={run.output} />
        </section>
      ) : null}
      {details}
      {demo ? (
        <section className="panel">
          <h2>What this shows</h2>
          <ul className="checks">
            {demo.shows.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </section>
      ) : null}
    </aside>
  );
}

const TERMINAL_STATUSES = new Set(["completed", "failed", "cancelled"]);

/** What the timeline's composition steps read: child id → status, callback id → step id. */
function factsOf(children: RunLink[], callbacks: CallbackView[]): CompositionFacts {
  return {
    childStatus: Object.fromEntries(children.map((child) => [child.id, child.status])),
    callbackSteps: Object.fromEntries(callbacks.map((callback) => [callback.id, callback.stepId])),
  };
}
