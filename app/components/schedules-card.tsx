import Link from "next/link";
import type { Durable } from "@/lib/durable";
import { workflowTitles } from "../workflows/catalog";
import { formatRelative, formatTimestamp } from "./format";

type ScheduleInfo = Awaited<ReturnType<Durable["schedules"]>>[number];

/**
 * The registered schedules (workflow option `schedule`): each one's cron, timezone, next slot and
 * the run its last slot started. A table on a wide screen, one card per schedule on a phone.
 */
export function SchedulesCard({ schedules, now }: { schedules: ScheduleInfo[]; now: number }) {
  if (schedules.length === 0) return null;
  return (
    <section aria-labelledby="schedules-title" className="schedules-section" style={{ marginTop: 32 }}>
      <h2 id="schedules-title" className="section-title">
        Schedules
      </h2>
      <div className="table-wrap">
        <table className="runs-table stack-table" data-schedules>
          <thead>
            <tr>
              <th>Workflow</th>
              <th>Cron</th>
              <th>Next slot</th>
              <th>Last run</th>
            </tr>
          </thead>
          <tbody>
            {schedules.map((schedule) => (
              <ScheduleRow key={schedule.workflow} schedule={schedule} now={now} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function ScheduleRow({ schedule, now }: { schedule: ScheduleInfo; now: number }) {
  const next = schedule.nextSlot?.toISOString();
  const last = schedule.lastSlot?.toISOString();
  return (
    <tr data-schedule={schedule.workflow}>
      <td className="cell-main">
        <strong>
          <code>{schedule.workflow}</code>
        </strong>
        {workflowTitles[schedule.workflow] ? (
          <div className="muted small">{workflowTitles[schedule.workflow]}</div>
        ) : null}
      </td>
      <td data-label="Cron">
        <code>{schedule.cron}</code>
        <div className="muted small">{schedule.timezone}</div>
      </td>
      <td data-label="Next slot">
        {next ? (
          <>
            {formatTimestamp(next)}
            <div className="muted small">{formatRelative(next, now)}</div>
          </>
        ) : (
          // Planned by the next tick: the first slot after it first sees the schedule.
          <span className="muted">at the next tick</span>
        )}
      </td>
      <td data-label="Last run">
        {schedule.lastRunId ? (
          <>
            <Link href={`/runs/${encodeURIComponent(schedule.lastRunId)}`} className="run-link">
              <code>{schedule.lastRunId}</code>
            </Link>
            {last ? <div className="muted small">{formatRelative(last, now)}</div> : null}
          </>
        ) : (
          <span className="muted">none yet</span>
        )}
      </td>
    </tr>
  );
}
