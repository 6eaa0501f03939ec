// The chaos checks of child runs and races (scripts/chaos/compose-invariants.ts, I11–I13) pass a
// clean run of the real engine and fire when the engine is broken on purpose in the test's
// database: an invoke answered with another output, a race whose answer takes a losing delivery,
// a child started a second time under another id.
import { sql, type Kysely } from "kysely";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createDurable, type Durable } from "@/lib/durable";
import { checkCompositionInvariants } from "@/scripts/chaos/compose-invariants";
import { createChaosDatabase } from "@/scripts/chaos/harness-db";
import { checkInvariants } from "@/scripts/chaos/invariants";
import { attachSink, chaosWorkflows, composeExpectation, chaosParent } from "@/scripts/chaos/workflow";

const open: { db: Kysely<any>; sink: pg.Pool }[] = [];
afterEach(async () => {
  for (const { db, sink } of open.splice(0)) {
    await sink.end();
    await db.destroy();
  }
});

/** Replaces `from` with `to` in the body of SQL function `name`, in this database only. */
async function breakFunction(db: Kysely<any>, name: string, from: string, to: string) {
  const { rows } = await sql<{ src: string }>`select pg_get_functiondef(${name}::regproc) as src`.execute(db);
  expect(rows[0]!.src).toContain(from);
  await sql.raw(rows[0]!.src.replace(from, to)).execute(db);
}

/**
 * Two parents advanced by hand: "early" has its signal before it reaches its race (the signal
 * wins); "late" gets it after its raced child ended (the child wins, the delivery stays untaken).
 */
async function runParents(name: string, breakIt?: (db: Kysely<any>) => Promise<void>) {
  const { url, db } = await createChaosDatabase(name);
  const sink = new pg.Pool({ connectionString: url, max: 1 });
  open.push({ db, sink });
  attachSink(sink);
  await breakIt?.(db);
  const durable = createDurable({ db, workflows: chaosWorkflows, secrets: { durable: "t" }, log: () => {} });
  const advance = async (...ids: string[]) => {
    for (const id of ids) await durable.advance(id);
  };
  for (const id of ["early", "late"]) {
    await durable.start(chaosParent, {}, { id });
    await advance(id, `${id}/c0`, `${id}/c1`, `${id}/c2`, id);
  }
  await durable.signal({ runId: "early", name: "go", payload: 1 });
  await advance("early/late", "late/late");
  await durable.signal({ runId: "late", name: "go", payload: 2 });
  await advance("early", "late");
  return { db, durable };
}

/** The invariants (I1–I13) with violations, and what each printed first. */
const violations = async (db: Kysely<any>) =>
  Object.fromEntries(
    [...(await checkInvariants(db, composeExpectation)), ...(await checkCompositionInvariants(db))]
      .filter((inv) => inv.violations.length > 0)
      .map((inv) => [inv.id, inv.violations[0]]),
  );

const outputOf = async (durable: Durable, id: string) => (await durable.status(id))?.output;

describe("the chaos checks of child runs and races", () => {
  it("pass a clean run: each parent answered by its children, each race by one branch", async () => {
    const { db, durable } = await runParents("durable_chaos_compose_clean");
    expect(await outputOf(durable, "early")).toMatchObject({ race: "go" });
    expect(await outputOf(durable, "late")).toMatchObject({ race: "late" });
    const results = await checkCompositionInvariants(db);
    expect(results.map((r) => [r.id, r.checked])).toEqual([
      ["I11", 8],
      ["I12", 6],
      ["I13", 2],
    ]);
    expect(await violations(db)).toEqual({});
  });

  it("fire I12 when an invoke is answered with an output its child did not have", async () => {
    const { db } = await runParents("durable_chaos_compose_i12", (db) =>
      breakFunction(db, "durable_answer_race", "v_result := v_value;", "v_result := v_value || '{\"output\": 0}';"),
    );
    // Each invoke, and each parent's output made of them.
    expect(await violations(db)).toEqual({ I12: expect.stringContaining('"step_id":"c0"') });
  });

  it("fire I13 when a race's answer takes a losing branch's delivery", async () => {
    // Any answer takes every untaken delivery of its run, the winner's or not.
    const { db } = await runParents("durable_chaos_compose_i13", async (db) => {
      await breakFunction(
        db,
        "durable_answer_race",
        "if found and p_win ->> 'signal_seq' is not null then",
        "if found then",
      );
      const seq = "seq = (p_win ->> 'signal_seq')::bigint";
      await breakFunction(db, "durable_answer_race", seq, "seq = coalesce((p_win ->> 'signal_seq')::bigint, seq)");
    });
    expect(await violations(db)).toEqual({ I13: expect.stringContaining('"run_id":"late","step_id":"race"') });
  });

  it("fire I11 when a child is started a second time under another id", async () => {
    const { db, durable } = await runParents("durable_chaos_compose_i11");
    await sql`
      insert into durable_runs (id, workflow, input, wake_at, parent_id)
      values ('late/late-again', 'chaos-order', '{"work": [0, 0]}', now(), 'late')`.execute(db);
    await durable.advance("late/late-again");
    expect(await violations(db)).toEqual({ I11: expect.stringContaining("late/late-again") });
  });
});
