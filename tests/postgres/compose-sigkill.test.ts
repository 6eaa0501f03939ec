// Worker processes SIGKILLed at each failpoint of an invoke and of a race, on the real server
// (docs/guide/composition.md, "Child runs" and "Races"), then the run finished by this process:
// each child inserted once and its effect counted, each wait answered once, every run completed.
// A losing signal's delivery stays untaken in the mailbox.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, createDurable, type Durable } from "@/lib/durable";
import type { FailpointName } from "@/lib/durable/engine/run/failpoints";
import { createTestDatabase } from "../helpers/databases";
import { killWorkerAt as killWorker } from "../helpers/kill-worker";
import { composables, effects, invokeParent, raceParent } from "./fixtures/composable";

let url: string;
let db: Kysely<any>;
let durable: Durable;

beforeAll(async () => {
  url = await createTestDatabase("durable_compose_sigkill");
  db = await connect(url, { driver: "pg" });
  effects.db = db;
  durable = createDurable({ db, workflows: composables, secrets: { durable: "t" }, log: () => {} });
  await durable.migrate();
  // What only the test needs to judge: every run row inserted, every run ended, every step completed.
  await sql
    .raw(`
    create table compose_effects (run_id text not null, step_id text not null);
    create table compose_log (what text not null, run_id text not null, step_id text);
    create function compose_log_run() returns trigger language plpgsql as $$
    begin
      insert into compose_log values (case when tg_op = 'INSERT' then 'insert' else 'end' end, new.id, null);
      return new;
    end $$;
    create trigger compose_log_insert after insert on durable_runs for each row execute function compose_log_run();
    create trigger compose_log_end after update on durable_runs for each row
      when (new.status in ('completed', 'failed', 'cancelled') and old.status is distinct from new.status)
      execute function compose_log_run();
    create function compose_log_step() returns trigger language plpgsql as $$
    begin insert into compose_log values ('completed', new.run_id, new.step_id); return new; end $$;
    create trigger compose_log_step_insert after insert on durable_steps for each row
      when (new.status = 'completed') execute function compose_log_step();
    create trigger compose_log_step_update after update on durable_steps for each row
      when (new.status = 'completed' and old.status <> 'completed') execute function compose_log_step();`)
    .execute(db);
});
afterAll(async () => {
  await durable?.close();
});

/** Advances `runId` in a worker process armed at `point`, which must SIGKILL itself there. */
const killWorkerAt = (runId: string, point: FailpointName) =>
  killWorker("tests/postgres/fixtures/compose-kill-worker.ts", url, runId, point);

const terminal = async (id: string) => {
  const status = (await durable.status(id))?.status;
  return status === "completed" || status === "failed" || status === "cancelled";
};

/** Each case: a phase the parent is brought to here, the run a worker is killed advancing, where. */
interface Case {
  parent: string;
  phase: string;
  point: FailpointName;
}

const cases = (prefix: string, phases: Record<string, FailpointName[]>): Case[] =>
  Object.entries(phases).flatMap(([phase, points]) =>
    points.map((point) => ({ parent: `${prefix}.${phase}.${point}`, phase, point })),
  );

/** Kills a worker for every case at once, moves the clock past their leases, then finishes each case here. */
async function killThenRecover(
  all: Case[],
  bring: (c: Case) => Promise<string>,
  recover: (c: Case) => Promise<void>,
): Promise<void> {
  const targets: string[] = [];
  for (const c of all) {
    await durable.start(c.parent.startsWith("invoke") ? invokeParent : raceParent, {}, { id: c.parent });
    targets.push(await bring(c));
  }
  await Promise.all(all.map((c, i) => killWorkerAt(targets[i]!, c.point)));
  await durable.testing.advanceClock("2m"); // the dead owners' leases (40 s budget + 1 s margin) ran out
  for (const c of all) {
    for (let round = 0; round < 10 && !(await terminal(c.parent)); round++) await recover(c);
    expect((await durable.status(c.parent))?.status, c.parent).toBe("completed");
  }
}

type Log = Map<string, number>;
async function readLog(): Promise<{ inserts: Log; ends: Log; completions: Log; effects: Log }> {
  const count = async (query: ReturnType<typeof sql<{ key: string; n: number }>>) =>
    new Map((await query.execute(db)).rows.map((r) => [r.key, r.n]));
  return {
    inserts: await count(
      sql`select run_id as key, count(*)::int as n from compose_log where what = 'insert' group by 1`,
    ),
    ends: await count(sql`select run_id as key, count(*)::int as n from compose_log where what = 'end' group by 1`),
    completions: await count(sql`
      select run_id || ':' || step_id as key, count(*)::int as n from compose_log where what = 'completed' group by 1`),
    effects: await count(
      sql`select run_id || ':' || step_id as key, count(*)::int as n from compose_effects group by 1`,
    ),
  };
}

/** Every step of every run of the case completed once, every run inserted once and ended once. */
async function expectOnce(c: Case, runIds: string[], log: Awaited<ReturnType<typeof readLog>>) {
  for (const id of runIds) {
    expect(log.inserts.get(id), `${c.parent}: inserts of ${id}`).toBe(1);
    expect(log.ends.get(id), `${c.parent}: ends of ${id}`).toBe(1);
  }
  const ids = JSON.stringify(runIds);
  const { rows } = await sql<{ run_id: string; step_id: string }>`
    select run_id, step_id from durable_steps
     where run_id in (select jsonb_array_elements_text(${ids}::jsonb))`.execute(db);
  for (const { run_id, step_id } of rows) {
    expect(log.completions.get(`${run_id}:${step_id}`), `${c.parent}: completions of ${run_id}:${step_id}`).toBe(1);
  }
}

// Between the effect of a held-back `run` receipt and the write it rides on, the body runs again.
const rerunsWork = (point: FailpointName) => ["run.after-body", "run.after-receipt", "finish.before"].includes(point);

describe("a worker SIGKILLed mid-invoke", () => {
  const all = cases("invoke", {
    // The parent's first execution: the started child, then the suspension that inserts three
    // (finish.before comes just before suspend.before: the final write's own failpoint).
    start: [
      "claim.after",
      "start.after-insert",
      "receipt.before-write",
      "suspend.before",
      "suspend.after",
      "finish.after",
    ],
    // Child c1, between its claim and its end (which makes the parent due).
    child: ["claim.after", "run.before-body", "run.after-body", "run.after-receipt", "finish.before", "finish.after"],
    // The parent woken by c0's end: it answers c0 and waits again on c1 and c2.
    "woken-by-one": ["claim.after", "suspend.before", "suspend.after"],
    // The parent woken once every child ended: it answers the three invokes and completes.
    "woken-by-all": ["claim.after", "finish.before", "finish.after"],
  });
  const kids = (p: string) => ["side", "c0", "c1", "c2"].map((k) => `${p}/${k}`);

  it(`recovers from ${all.length} kills: each child started once, each invoke answered once`, {
    timeout: 180_000,
  }, async () => {
    await killThenRecover(
      all,
      async ({ parent, phase }) => {
        if (phase === "start") return parent;
        expect(await durable.advance(parent)).toBe("waiting");
        if (phase === "child") return `${parent}/c1`;
        for (const kid of phase === "woken-by-one" ? [`${parent}/c0`] : kids(parent)) {
          expect(await durable.advance(kid)).toBe("completed");
        }
        return parent;
      },
      async ({ parent }) => {
        for (const id of [parent, ...kids(parent)]) await durable.advance(id);
      },
    );
    const log = await readLog();
    for (const c of all) {
      expect((await durable.status(c.parent))!.output, c.parent).toEqual({
        side: `${c.parent}/side`,
        outs: [0, 1, 2].map((n) => ({ n, doubled: n * 2 })),
      });
      expect((await durable.list({ parentId: c.parent })).runs.map((r) => r.id).sort(), c.parent).toEqual(
        kids(c.parent).sort(),
      );
      for (const kid of kids(c.parent)) {
        const twice = c.phase === "child" && kid.endsWith("/c1") && rerunsWork(c.point);
        expect(log.effects.get(`${kid}:work`), `${c.parent}: effects of ${kid}`).toBe(twice ? 2 : 1);
        expect((await durable.status(kid))!.status, kid).toBe("completed");
      }
      await expectOnce(c, [c.parent, ...kids(c.parent)], log);
    }
  });
});

describe("a worker SIGKILLed mid-race", () => {
  const all = cases("race", {
    // The parent's first execution: it starts the child and parks on the race.
    start: ["claim.after", "start.after-insert", "suspend.before", "suspend.after"],
    // The child's end, which makes the parent due.
    "kid-end": ["finish.before", "finish.after"],
    // The child ended, then the signal landed: the claim decides the race (the child's end is earlier).
    decided: ["claim.after", "run.before-body", "finish.before", "finish.after"],
  });
  const signalGo = (parent: string) => durable.signal({ runId: parent, name: "go", payload: "late", id: "go-once" });

  it(`recovers from ${all.length} kills: each race answered once, the losing delivery left untaken`, {
    timeout: 180_000,
  }, async () => {
    await killThenRecover(
      all,
      async ({ parent, phase }) => {
        if (phase === "start") return parent;
        expect(await durable.advance(parent)).toBe("waiting");
        if (phase === "kid-end") return `${parent}/kid`;
        expect(await durable.advance(`${parent}/kid`)).toBe("completed");
        await signalGo(parent);
        return parent;
      },
      async ({ parent }) => {
        await durable.advance(`${parent}/kid`);
        // The signal lands only after the child's end, so the child's branch wins by the clock.
        if (await terminal(`${parent}/kid`)) await signalGo(parent);
        await durable.advance(parent);
      },
    );
    const log = await readLog();
    for (const c of all) {
      const kid = `${c.parent}/kid`;
      expect((await durable.status(c.parent))!.output, c.parent).toEqual({
        race: { branch: "kid", value: { status: "completed", output: { n: 7, doubled: 14 }, error: null } },
        after: "kid",
      });
      const signals = await sql<{ name: string; taken_by: string | null }>`
        select name, taken_by from durable_signals where run_id = ${c.parent}`.execute(db);
      expect(signals.rows, c.parent).toEqual([{ name: "go", taken_by: null }]);
      const kidTwice = c.phase === "kid-end" && rerunsWork(c.point);
      expect(log.effects.get(`${kid}:work`), `${c.parent}: effects of the child`).toBe(kidTwice ? 2 : 1);
      const afterTwice = c.phase === "decided" && rerunsWork(c.point);
      expect(log.effects.get(`${c.parent}:after`), `${c.parent}: effects of "after"`).toBe(afterTwice ? 2 : 1);
      await expectOnce(c, [c.parent, kid], log);
    }
  });
});
