// Child runs under racing tick loops on the real server (docs/guide/composition.md, "Child runs"):
// eight instances, each over its own pool, drain 50 parents of 4 invoked children at once. Every
// child is inserted once, by its parent's suspension; its end wakes the parent in its own
// transaction, so a parent is claimed once to start and then only when a child ended. A parent
// retried after a failed child keeps the children that completed.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow } from "@/lib/durable";
import { createTestDatabase, resetDurableTables } from "../helpers/databases";

const CHILDREN = 4;
/** How often each child's `work` body ran, by child run id and input. */
const executions = new Map<string, number>();
/** Child run ids whose `work` step throws on its first attempt. */
const failOnce = new Set<string>();

const child = defineWorkflow({
  name: "rc-child",
  input: z.object({ parent: z.string(), k: z.number() }),
  output: z.object({ parent: z.string(), k: z.number(), square: z.number() }),
  async run(ctx, input) {
    const square = await ctx.step.run("work", async () => {
      // The last child takes longer, by its parent: its parent is woken by the others first and
      // waits again while other parents' children end (a wake-up meant for another would show).
      const long = input.k === CHILDREN - 1 ? 20 * (Number(input.parent.slice(-1)) % 10) : 0;
      await new Promise((r) => setTimeout(r, 5 + long));
      const key = `${ctx.runId}:${input.parent}:${input.k}`;
      executions.set(key, (executions.get(key) ?? 0) + 1);
      if (failOnce.delete(ctx.runId)) throw new Error(`child ${ctx.runId} fails once`);
      return input.k * input.k;
    });
    return { parent: input.parent, k: input.k, square };
  },
});

const parent = defineWorkflow({
  name: "rc-parent",
  input: z.object({}),
  async run(ctx) {
    const outs = await Promise.all(
      Array.from({ length: CHILDREN }, (_, k) => ctx.step.invoke(`c${k}`, child, { parent: ctx.runId, k })),
    );
    return { outs };
  },
});

const PARENTS = 50;
const LOOPS = 8;
const workflows = [child, parent];
let url: string;
let admin: Kysely<any>;
let control: Durable;

beforeAll(async () => {
  url = await createTestDatabase("durable_compose_racing");
  admin = await connect(url, { driver: "pg" });
  control = createDurable({ db: admin, workflows, secrets: { durable: "t" } });
  await control.migrate();
  // What only the test needs to judge: every insert of a run row and every end of a run.
  await sql
    .raw(`
    create table rc_inserts (id text not null);
    create table rc_ends (id text not null, status text not null);
    create function rc_log_insert() returns trigger language plpgsql as $$
    begin insert into rc_inserts values (new.id); return new; end $$;
    create trigger rc_log_insert after insert on durable_runs for each row execute function rc_log_insert();
    create function rc_log_end() returns trigger language plpgsql as $$
    begin insert into rc_ends values (new.id, new.status); return new; end $$;
    create trigger rc_log_end after update on durable_runs for each row
      when (new.status in ('completed', 'failed', 'cancelled') and old.status is distinct from new.status)
      execute function rc_log_end();`)
    .execute(admin);
});
beforeEach(async () => {
  await resetDurableTables(admin);
  await sql`truncate rc_inserts, rc_ends`.execute(admin);
  executions.clear();
  failOnce.clear();
});
afterAll(async () => {
  await admin?.destroy();
});

const unfinished = async () =>
  (
    await sql<{ n: number }>`
      select count(*)::int as n from durable_runs where status not in ('completed', 'failed', 'cancelled')`.execute(
      admin,
    )
  ).rows[0]!.n;

/** Eight instances, each over its own pool and advancing 4 runs at once, tick until every run ended. */
async function drainWithRacingLoops(): Promise<number[]> {
  const instances = await Promise.all(
    Array.from({ length: LOOPS }, async () =>
      createDurable({ db: await connect(url, { driver: "pg", poolSize: 2 }), workflows, secrets: { durable: "t" } }),
    ),
  );
  const deadline = Date.now() + 60_000;
  try {
    return await Promise.all(
      instances.map(async (durable) => {
        let claimed = 0;
        while ((await unfinished()) > 0) {
          if (Date.now() > deadline) throw new Error(`${await unfinished()} runs unfinished after 60 s`);
          const report = await durable.tick({ budgetMs: 40_000, concurrency: 4 });
          claimed += report.claimed;
          // Another loop holds the work that is left (a parent waits on children it is running).
          if (report.claimed === 0) await new Promise((r) => setTimeout(r, 10));
        }
        return claimed;
      }),
    );
  } finally {
    await Promise.all(instances.map((d) => d.close()));
  }
}

const parentIds = Array.from({ length: PARENTS }, (_, i) => `parent-${String(i).padStart(2, "0")}`);
const childIds = (p: string) => Array.from({ length: CHILDREN }, (_, k) => `${p}/c${k}`);
const expectedOutput = (p: string) => ({
  outs: Array.from({ length: CHILDREN }, (_, k) => ({ parent: p, k, square: k * k })),
});

async function countBy(table: "rc_inserts" | "rc_ends", status?: string): Promise<Map<string, number>> {
  const { rows } = await sql<{ id: string; n: number }>`
    select id, count(*)::int as n from ${sql.table(table)}
     where ${status === undefined ? sql`true` : sql`status = ${status}`} group by id`.execute(admin);
  return new Map(rows.map((r) => [r.id, r.n]));
}

describe(`${LOOPS} racing tick loops over ${PARENTS} parents × ${CHILDREN} invoked children`, () => {
  it("start every child once, answer every parent from its children, and claim a parent only when woken", {
    timeout: 90_000,
  }, async () => {
    await control.startMany(
      parent,
      parentIds.map(() => ({})),
      { ids: parentIds },
    );
    const claimedBy = await drainWithRacingLoops();

    const runs = PARENTS * (1 + CHILDREN);
    expect(claimedBy.filter((n) => n > 0).length).toBeGreaterThan(1);
    const statuses = await sql<{ status: string; n: number }>`
      select status, count(*)::int as n from durable_runs group by status`.execute(admin);
    expect(statuses.rows).toEqual([{ status: "completed", n: runs }]);

    const inserts = await countBy("rc_inserts");
    const ends = await countBy("rc_ends");
    for (const p of parentIds) {
      const status = (await control.status(p))!;
      expect(status.output).toEqual(expectedOutput(p));
      expect((await control.list({ parentId: p })).runs.map((r) => r.id).sort()).toEqual(childIds(p));
      for (const [k, id] of childIds(p).entries()) {
        // One insert of the row (the suspension's, on conflict do nothing), one body, one end.
        expect(inserts.get(id)).toBe(1);
        expect(executions.get(`${id}:${p}:${k}`)).toBe(1);
        expect(ends.get(id)).toBe(1);
      }
      expect(ends.get(p)).toBe(1);
    }
    expect(executions.size).toBe(PARENTS * CHILDREN);

    // A parent is claimed once to start; after that only by a child's end, and every such claim
    // answers at least one invoke: the invokes a claim answers carry its clock (completed_at), so
    // the claims after the first are exactly the distinct answer times, at most one per child.
    const claims = await sql<{ id: string; attempts: number; answers: number }>`
      select r.id, r.attempts, count(distinct s.completed_at)::int as answers
        from durable_runs r join durable_steps s on s.run_id = r.id and s.kind = 'invoke'
       where r.workflow = 'rc-parent' group by r.id, r.attempts`.execute(admin);
    expect(claims.rows).toHaveLength(PARENTS);
    for (const row of claims.rows) {
      expect(row.attempts, row.id).toBe(1 + row.answers);
      expect(row.attempts, row.id).toBeLessThanOrEqual(1 + CHILDREN);
    }
    const refused = await sql<{ kind: string; n: number }>`
      select kind, count(*)::int as n from durable_events
       where kind in ('heal', 'fence.rejected', 'step.outcome-conflict') group by kind`.execute(admin);
    expect(refused.rows).toEqual([]);
  });

  it("a parent retried after a failed child keeps the children that completed", { timeout: 90_000 }, async () => {
    const parents = parentIds.slice(0, 10);
    for (const p of parents) failOnce.add(`${p}/c2`);
    await control.startMany(
      parent,
      parents.map(() => ({})),
      { ids: parents },
    );
    await drainWithRacingLoops();
    for (const p of parents) {
      const status = (await control.status(p))!;
      expect(status.status).toBe("failed");
      expect(status.error).toMatchObject({ code: "child_run_failed", message: expect.stringContaining(`${p}/c2`) });
      expect((await control.status(`${p}/c2`))!.status).toBe("failed");
    }

    // durable_retry_run retries the failed child with its parent; the others stay as they are.
    for (const p of parents) expect((await control.retry(p)).status).toBe("pending");
    await drainWithRacingLoops();

    const inserts = await countBy("rc_inserts");
    const completedEnds = await countBy("rc_ends", "completed");
    const failedEnds = await countBy("rc_ends", "failed");
    for (const p of parents) {
      expect((await control.status(p))!.output).toEqual(expectedOutput(p));
      expect(failedEnds.get(p)).toBe(1);
      expect(completedEnds.get(p)).toBe(1);
      for (const [k, id] of childIds(p).entries()) {
        expect(inserts.get(id)).toBe(1);
        expect(completedEnds.get(id)).toBe(1);
        // The completed children did not run again; the failed one ran twice (failed, then retried).
        expect(executions.get(`${id}:${p}:${k}`)).toBe(k === 2 ? 2 : 1);
        expect(failedEnds.get(id)).toBe(k === 2 ? 1 : undefined);
      }
    }
  });
});
