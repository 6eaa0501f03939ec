import { sql } from "kysely";
import { InvalidInputError } from "../errors";
import type { DurableDb } from "./tables";

/** Which waits are approvals: a workflow's name and the signal names it marks (engine/approvals.ts). */
export interface ApprovalTarget {
  workflow: string;
  name: string;
}

export interface ApprovalQuery {
  targets: readonly ApprovalTarget[];
  /** Signals any workflow's waits on are listed, decided item by item (a wing's: engine/wings.ts). */
  itemSignals: readonly string[];
  workflow?: string;
  tag?: string;
  limit: number;
  cursor?: string;
}

/** A waiting approval as stored: `input` and each decision's `reason` still sealed. */
export interface ApprovalRow {
  runId: string;
  workflow: string;
  version: string | null;
  stepId: string;
  name: string;
  /** A wait on one of `itemSignals`: its items come from the wing, not from this row. */
  itemized: boolean;
  input: unknown;
  tags: string[];
  waitingSince: Date;
  ageMs: number;
  decisions: { actor: string; approved: boolean; reason: unknown; decidedAt: string }[];
}

type Position = [micros: string, runId: string, stepId: string];

// Keyset over (the run's created_at in microseconds, run id, step id): newest runs first, as list()
// pages, and exact when runs share a millisecond or one run waits on two approvals.
const encodeCursor = (position: Position) => Buffer.from(JSON.stringify(position)).toString("base64url");

function decodeCursor(cursor: string): Position {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (
      Array.isArray(value) &&
      value.length === 3 &&
      /^\d{1,18}$/.test(value[0]) &&
      typeof value[1] === "string" &&
      typeof value[2] === "string"
    )
      return [value[0], value[1], value[2]];
  } catch {}
  throw new InvalidInputError("cursor is not one approvals() returned");
}

/** Rows strictly after `position` in the page's order. */
const afterPosition = ([micros, runId, stepId]: Position) =>
  sql`and (r.created_at, r.id, s.step_id::text)
        < (timestamptz 'epoch' + ${micros}::bigint * interval '1 microsecond', ${runId}, ${stepId})`;

/** Checks a cursor before anything is read. */
export const checkApprovalCursor = (cursor: string): void => void decodeCursor(cursor);

/**
 * One page of the waits a person decides: signal waits of waiting runs on a name their workflow
 * marks as an approval, not yet completed by a decision (no delivery of the name left untaken),
 * with the decisions recorded so far; and waits of any run on an `itemSignals` name, whose items
 * the engine asks the wing for. Driven by durable_runs_status_created (status = 'waiting'),
 * each run's steps by their primary key's run_id.
 */
export async function listApprovals(
  db: DurableDb,
  query: ApprovalQuery,
): Promise<{ rows: ApprovalRow[]; nextCursor: string | null }> {
  if (query.targets.length === 0 && query.itemSignals.length === 0) return { rows: [], nextCursor: null };
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  const { rows } = await sql<Record<string, any>>`
    select r.id as run_id, r.workflow, r.version, r.input, r.tags, s.step_id,
           coalesce(s.signal_name, s.step_id) as name, s.started_at,
           coalesce(s.signal_name, s.step_id) = any(${query.itemSignals}::text[]) as itemized,
           (extract(epoch from (durable_now() - s.started_at)) * 1000)::bigint::text as age_ms,
           (extract(epoch from r.created_at) * 1000000)::bigint::text as cursor_micros,
           coalesce((select jsonb_agg(jsonb_build_object('actor', d.actor, 'approved', d.approved,
                                        'reason', d.reason, 'decidedAt', d.decided_at) order by d.decided_at, d.actor)
                       from durable_approval_decisions d
                      where d.run_id = s.run_id and d.step_id = s.step_id), '[]'::jsonb) as decisions
      from durable_runs r
      join durable_steps s on s.run_id = r.id
     where r.status = 'waiting' and s.status = 'waiting' and s.kind = 'signal'
       and (coalesce(s.signal_name, s.step_id) = any(${query.itemSignals}::text[])
            or (exists (select 1
                          from unnest(${query.targets.map((t) => t.workflow)}::text[],
                                      ${query.targets.map((t) => t.name)}::text[]) as a(workflow, name)
                         where a.workflow = r.workflow and a.name = coalesce(s.signal_name, s.step_id))
                and not exists (select 1 from durable_signals g
                                 where g.run_id = r.id and g.name = coalesce(s.signal_name, s.step_id)
                                   and g.taken_by is null)))
       ${query.workflow === undefined ? sql`` : sql`and r.workflow = ${query.workflow}`}
       ${query.tag === undefined ? sql`` : sql`and r.tags @> array[${query.tag}::text] and r.tags <> '{}'`}
       ${after ? afterPosition(after) : sql``}
     order by r.created_at desc, r.id desc, s.step_id desc
     limit ${query.limit + 1}`.execute(db);
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    rows: page.map((row) => ({
      runId: row.run_id,
      workflow: row.workflow,
      version: row.version,
      stepId: row.step_id,
      name: row.name,
      itemized: row.itemized === true,
      input: row.input,
      tags: row.tags ?? [],
      waitingSince: new Date(row.started_at),
      ageMs: Math.max(0, Number(row.age_ms)),
      decisions: row.decisions,
    })),
    nextCursor:
      rows.length > query.limit && last ? encodeCursor([last.cursor_micros, last.run_id, last.step_id]) : null,
  };
}
