// I11–I13: what must hold after a chaos scenario with child runs and races (docs/guide/composition.md,
// "Child runs" and "Races"), computed from the database and the harness's logs (harness-db.ts),
// beside I1–I10 (invariants.ts).
import { sql, type Kysely } from "kysely";
import { type InvariantResult, invariantResult as result, n, rows } from "./invariants";

/** I11: each child run inserted once, under its parent, and named by exactly one of its parent's steps. */
async function childStartedOnce(db: Kysely<any>): Promise<InvariantResult> {
  const found = await rows(
    db,
    sql`
    select run_id, count(*)::int as inserts from chaos_inserts where parent_id is not null
     group by 1 having count(*) <> 1
    union all
    select s.run_id || ' ' || s.step_id, 0 from durable_steps s
      left join durable_runs c on c.id = coalesce(s.target_runs[1], s.result ->> 'id')
     where (s.kind = 'invoke' or (s.kind = 'start' and s.status = 'completed'))
       and c.parent_id is distinct from s.run_id
    union all
    select c.id, count(s.step_id)::int from durable_runs c
      left join durable_steps s on s.run_id = c.parent_id and s.kind in ('invoke', 'start')
            and c.id = coalesce(s.target_runs[1], s.result ->> 'id')
     where c.parent_id is not null group by c.id having count(s.step_id) <> 1`,
  );
  const checked = await n(db, sql`select count(*) as n from durable_runs where parent_id is not null`);
  return result("I11", "each child run started once (one insert, one step naming it)", checked, found);
}

/**
 * I12: a parent never misses a child's end: every invoke of a terminal parent is answered, with the
 * outcome its child really had, and a completed parent's output repeats the children's outputs.
 */
async function parentAnsweredByChildren(db: Kysely<any>): Promise<InvariantResult> {
  const found = await rows(
    db,
    sql`
    select s.run_id, s.step_id, s.status, c.status as child_status from durable_steps s
      join durable_runs p on p.id = s.run_id
      left join durable_runs c on c.id = s.target_runs[1]
     where s.kind = 'invoke' and p.status in ('completed', 'failed', 'cancelled')
       and not (   (s.status = 'completed' and c.status = 'completed'
                    and s.result -> 'output' = c.output and s.result ->> 'status' = 'completed')
                or (s.status = 'failed' and c.status in ('failed', 'cancelled')
                    and s.error ->> 'childStatus' = c.status))
    union all
    select p.id, 'output', p.status, null from durable_runs p
     where p.workflow = 'chaos-parent' and p.status = 'completed'
       and p.output -> 'delivered' is distinct from (
             select jsonb_agg(c.output -> 'delivered' order by s.seq) from durable_steps s
               join durable_runs c on c.id = s.target_runs[1]
              where s.run_id = p.id and s.kind = 'invoke')`,
  );
  const checked = await n(db, sql`select count(*) as n from durable_steps where kind = 'invoke'`);
  return result("I12", "a parent never misses a child's end (invokes = their outcomes)", checked, found);
}

/**
 * I13: a race has one winner: its row answered once, by a branch satisfied (database clock) by
 * the time of the answer; a winning signal took one delivery, a losing one took none; the
 * parent's output names the same branch.
 */
async function raceHasOneWinner(db: Kysely<any>): Promise<InvariantResult> {
  const found = await rows(
    db,
    sql`
    with races as (
      select s.*, s.result ->> 'branch' as winner,
             (select count(*) from chaos_receipts r where r.run_id = s.run_id and r.step_id = s.step_id) as answers,
             (select count(*) from durable_signals g where g.run_id = s.run_id and g.taken_by = s.step_id) as taken,
             case s.result ->> 'branch'
               when 'late' then (select c.finished_at from durable_runs c
                                  where c.id = (select b ->> 'run' from jsonb_array_elements(s.branches) b
                                                 where b ->> 'name' = 'late'))
               when 'go' then (select g.created_at from durable_signals g
                                where g.run_id = s.run_id and g.taken_by = s.step_id)
               when 'nap' then (select (b ->> 'wake_at')::timestamptz from jsonb_array_elements(s.branches) b
                                 where b ->> 'name' = 'nap')
             end as satisfied_at
        from durable_steps s where s.kind = 'any'
    )
    select x.run_id, x.step_id, x.status, x.winner, x.answers, x.taken, x.satisfied_at, x.completed_at
      from races x join durable_runs p on p.id = x.run_id
     where (p.status = 'completed' and x.status <> 'completed')
        or (x.status = 'completed' and (
              x.answers <> 1 or x.winner not in ('late', 'go', 'nap') or x.satisfied_at is null
              or x.satisfied_at > x.completed_at or x.taken <> case when x.winner = 'go' then 1 else 0 end
              or (p.status = 'completed' and p.output ->> 'race' is distinct from x.winner)))`,
  );
  const checked = await n(db, sql`select count(*) as n from durable_steps where kind = 'any'`);
  return result("I13", "a race has one winner, satisfied when answered, one delivery", checked, found);
}

export async function checkCompositionInvariants(db: Kysely<any>): Promise<InvariantResult[]> {
  return [await childStartedOnce(db), await parentAnsweredByChildren(db), await raceHasOneWinner(db)];
}
