"use client";
import { useContext, useEffect, useState } from "react";
import type { RunStatus } from "@/lib/durable";
import { useDurableStream } from "@/lib/durable/react";
import { RunContext } from "./run-view";

/** What the research workflow (app/workflows/research.ts) returns. */
export interface ResearchOutput {
  question?: string;
  status?: "answered" | "rejected" | "expired";
  approvedBy?: string | null;
  answer?: string | null;
}

export interface ResearchPanelProps {
  runId: string;
  /** The run's status token: the stream route answers with it, as the status route does. */
  token: string;
  question: string | null;
  /** The outline step's receipt as the server read it: shown before the stream is read (or without JavaScript). */
  outline: string | null;
  /** The run's status and output as the server read them; the page's poller has the newer ones once it runs. */
  status: RunStatusValue;
  output: ResearchOutput | null;
}

type RunStatusValue = RunStatus["status"];

const TERMINAL = new Set<RunStatusValue>(["completed", "failed", "cancelled"]);

/**
 * The research run's own view, read from the run's stream with useDurableStream (docs/model.md,
 * "Run streams"): the outline once the run wrote it, then the answer as the model writes it, one
 * `[data-seq]` span per chunk of step "write". Before the browser code runs, what the server read:
 * the outline's receipt, the stored answer of a completed run.
 */
export function ResearchPanel({ runId, token, question, outline, status, output }: ResearchPanelProps) {
  const page = useContext(RunContext);
  const stream = useDurableStream(runId, { token });
  const [client, setClient] = useState(false);
  useEffect(() => setClient(true), []);

  const run = page?.run;
  const current = run?.status ?? status;
  const result = (run?.output as ResearchOutput | null | undefined) ?? output;
  // The stream ends once the run is terminal: read the run's status now rather than at the next poll.
  const refresh = page?.refresh;
  useEffect(() => {
    if (stream.done) refresh?.();
  }, [stream.done, refresh]);

  const outlineText = stream.textOf("outline") || outline;
  const written = stream.chunks.filter((c) => c.stepId === "write");
  const writeStarted = written.length > 0 || !!run?.steps.some((s) => s.id === "write");
  const writing = client && !stream.done && !TERMINAL.has(current) && writeStarted;
  const awaitingApproval = current === "waiting" && run?.waitingFor?.name === "outline";

  let placeholder: string;
  if (result?.status === "rejected") placeholder = "The outline was rejected: no answer was written.";
  else if (result?.status === "expired") placeholder = "Nobody answered the outline in time: no answer was written.";
  else if (current === "failed" || current === "cancelled")
    placeholder = `The run ${current === "failed" ? "failed" : "was cancelled"} before an answer was written.`;
  else if (awaitingApproval || (!outlineText && !writeStarted))
    placeholder = "The answer appears here as it is written, once the outline is approved.";
  else placeholder = "The answer appears here as it is written.";

  return (
    <section className="panel research-panel" data-testid="research">
      <h2>Research</h2>
      {question ? (
        <p className="research-question">
          <span className="research-label">Question</span> {question}
        </p>
      ) : null}

      <h3 className="research-heading">Outline</h3>
      {outlineText ? (
        <div className="research-outline" data-testid="outline">
          {linesOf(outlineText).map(({ at, line }) => (
            // An indented line (a sub-question's answer) keeps its indent when it wraps.
            <div key={at} className={/^\s/.test(line) ? "research-indent" : undefined}>
              {line.trim() || "\u00a0"}
            </div>
          ))}
        </div>
      ) : (
        <p className="muted small">Planning: the outline appears here once the sub-questions are answered.</p>
      )}

      <h3 className="research-heading">Answer</h3>
      <div className={writing ? "research-answer research-writing" : "research-answer"} data-testid="answer">
        {written.length > 0 ? (
          written.map((chunk) => (
            <span key={chunk.seq} data-seq={chunk.seq}>
              {typeof chunk.data === "string" ? chunk.data : ""}
            </span>
          ))
        ) : result?.answer ? (
          result.answer
        ) : writing ? null : (
          <span className="muted">{placeholder}</span>
        )}
      </div>
      {stream.status === "failed" && written.length > 0 ? (
        <p className="small error-text">The answer could not be finished.</p>
      ) : stream.error && !stream.done ? (
        <p className="small muted">Reconnecting to the run's stream…</p>
      ) : null}
    </section>
  );
}

/** The text's lines, each with the offset it starts at (a key that stays when the text grows). */
function linesOf(text: string): { at: number; line: string }[] {
  let at = 0;
  return text.split("\n").map((line) => {
    const start = at;
    at += line.length + 1;
    return { at: start, line };
  });
}
