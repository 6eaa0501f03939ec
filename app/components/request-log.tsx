import Link from "next/link";
import type { RecentRequest } from "../mock-providers/stats";
import { formatClock } from "./format";

const OUTCOME_LABELS: Record<string, string> = {
  created: "created",
  deduped: "duplicate, deduped",
  failed: "failed",
  lost_response: "done, response lost",
  rejected: "rejected",
  ok: "ok",
};

/** The mock providers' requests, newest first; a card per request under 640 px (app/globals.css). */
export function RequestLog({ requests }: { requests: RecentRequest[] }) {
  return (
    <div className="table-wrap">
      <table className="runs-table compact stack-table" data-testid="request-log">
        <thead>
          <tr>
            <th className="nowrap">Time (UTC)</th>
            <th>Provider</th>
            <th>Request</th>
            <th>Idempotency key</th>
            <th>Outcome</th>
            <th>Run</th>
          </tr>
        </thead>
        <tbody>
          {requests.map((r) => (
            <tr key={r.id} data-request={r.id}>
              <td className="nowrap cell-main">
                {formatClock(r.at)}
                <span className="narrow-only">
                  {" "}
                  · {r.provider} · {r.operation}
                </span>
              </td>
              <td className="wide-only">{r.provider}</td>
              <td className="wide-only">{r.operation}</td>
              <td data-label="Idempotency key" className="cell-wide">
                {r.idempotencyKey ? <code className="key">{r.idempotencyKey}</code> : <span className="muted">—</span>}
              </td>
              <td data-label="Outcome">
                <span className={`outcome outcome-${r.outcome}`}>{OUTCOME_LABELS[r.outcome] ?? r.outcome}</span>
                {r.detail ? <div className="muted small">{r.detail}</div> : null}
              </td>
              <td data-label="Run">
                {r.runId ? (
                  <Link href={`/runs/${encodeURIComponent(r.runId)}`} className="run-link">
                    <code>{r.runId}</code>
                  </Link>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
