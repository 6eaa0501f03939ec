// Approvals across runs (docs/guide/approvals.md), on every database: defineWorkflow({ approvals }),
// durable.decide() (actor, reason, quorum, approvers, first completing decision wins, 409 after)
// and durable.approvals() (tag, workflow, paging). The SQL is durable_decide_approval (docs/sql.md).
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  approvalDecision,
  createDurable,
  type Durable,
  defineWorkflow,
  InvalidInputError,
  NotAnApproverError,
  RunNotFoundError,
  RunStateConflictError,
} from "@/lib/durable";
import { resetDurableTables } from "../helpers/databases";

export const deploy = defineWorkflow({
  name: "deploy",
  input: z.object({ service: z.string(), owner: z.string() }),
  signals: { ship: approvalDecision, note: z.string() },
  approvals: {
    ship: {
      quorum: 2,
      // The service's owner may not approve their own deploy.
      approvers: (actor, input: { owner: string }) => actor !== input.owner,
    },
  },
  async run(ctx, input) {
    const decision = await ctx.step.waitForSignal("ship");
    return { service: input.service, ...decision };
  },
});

export const refund = defineWorkflow({
  name: "refund",
  input: z.object({ amount: z.number() }),
  approvals: { approve: true },
  async run(ctx) {
    return ctx.step.waitForSignal("approve");
  },
});

/** A waiting run's approval, as the tests expect it listed. */
async function startWaiting(durable: Durable, id: string, tags?: string[]) {
  await durable.start(deploy, { service: `svc-${id}`, owner: "olivia" }, { id, ...(tags ? { tags } : {}) });
  await durable.advance(id);
  expect((await durable.status(id))?.status).toBe("waiting");
}

export function runApprovalsContract(label: string, open: () => Promise<Kysely<any>>) {
  describe(`approvals on ${label}`, () => {
    let durable: Durable;
    let db: Kysely<any>;

    beforeAll(async () => {
      db = await open();
      durable = createDurable({ db, workflows: [deploy, refund], secrets: { durable: "t" }, log: () => {} });
      await durable.migrate();
    });
    beforeEach(async () => resetDurableTables(db));
    afterAll(async () => durable?.close());

    it("lists a waiting approval with its run, input, age and quorum", async () => {
      await startWaiting(durable, "d1", ["team-a"]);
      await durable.testing.advanceClock("5s");
      const { approvals, nextCursor } = await durable.approvals();
      expect(nextCursor).toBeNull();
      expect(approvals).toHaveLength(1);
      const [pending] = approvals;
      expect(pending).toMatchObject({
        runId: "d1",
        workflow: "deploy",
        name: "ship",
        stepId: "ship",
        input: { service: "svc-d1", owner: "olivia" },
        tags: ["team-a"],
        quorum: 2,
        decisions: [],
      });
      expect(pending!.ageMs).toBeGreaterThanOrEqual(5000);
      expect(pending!.waitingSince).toBeInstanceOf(Date);
    });

    it("a quorum of distinct actors completes the wait with the last decision's actor and reason", async () => {
      await startWaiting(durable, "d2");
      expect(
        await durable.decide({ runId: "d2", name: "ship", actor: "ann", approved: true, reason: "looks fine" }),
      ).toEqual({ ok: true, completed: false, approvals: 1, quorum: 2 });
      const listed = (await durable.approvals()).approvals[0]!;
      expect(listed.decisions).toMatchObject([{ actor: "ann", approved: true, reason: "looks fine" }]);
      // The same actor again is no second vote.
      await expect(durable.decide({ runId: "d2", name: "ship", actor: "ann", approved: true })).rejects.toThrow(
        RunStateConflictError,
      );
      expect(await durable.decide({ runId: "d2", name: "ship", actor: "bob", approved: true, reason: "ok" })).toEqual({
        ok: true,
        completed: true,
        approvals: 2,
        quorum: 2,
      });
      // Decided: no longer listed, and a later decision is a conflict (409).
      expect((await durable.approvals()).approvals).toEqual([]);
      await expect(durable.decide({ runId: "d2", name: "ship", actor: "cat", approved: false })).rejects.toThrow(
        /already decided/,
      );
      await durable.advance("d2");
      const status = await durable.status("d2");
      expect(status?.status).toBe("completed");
      expect(status?.output).toEqual({ service: "svc-d2", approved: true, actor: "bob", reason: "ok" });
      await expect(durable.decide({ runId: "d2", name: "ship", actor: "cat", approved: true })).rejects.toThrow(
        RunStateConflictError,
      );
      const rows = (
        await sql<any>`select actor, approved from durable_approval_decisions
                        where run_id = 'd2' order by actor`.execute(db)
      ).rows;
      expect(rows).toEqual([
        { actor: "ann", approved: true },
        { actor: "bob", approved: true },
      ]);
    });

    it("one reject decides, whatever the quorum", async () => {
      await startWaiting(durable, "d3");
      expect(
        await durable.decide({ runId: "d3", name: "ship", actor: "ann", approved: false, reason: "not today" }),
      ).toMatchObject({ completed: true, approvals: 0 });
      await durable.advance("d3");
      expect((await durable.status("d3"))?.output).toEqual({
        service: "svc-d3",
        approved: false,
        actor: "ann",
        reason: "not today",
      });
    });

    it("approvers runs before a decision is taken: refused, nothing is recorded", async () => {
      await startWaiting(durable, "d4");
      await expect(durable.decide({ runId: "d4", name: "ship", actor: "olivia", approved: true })).rejects.toThrow(
        NotAnApproverError,
      );
      const count = await sql<any>`select count(*)::int as n from durable_approval_decisions`.execute(db);
      expect(count.rows[0].n).toBe(0);
      expect((await durable.approvals()).approvals[0]!.decisions).toEqual([]);
    });

    it("refuses bad input and changes nothing", async () => {
      await startWaiting(durable, "d5");
      const bad: unknown[] = [
        { runId: "d5", name: "ship", actor: "", approved: true },
        { runId: "d5", name: "ship", actor: "a\u0000b", approved: true },
        { runId: "d5", name: "ship", actor: "x".repeat(256), approved: true },
        { runId: "d5", name: "ship", actor: "ann", approved: "yes" },
        { runId: "d5", name: "ship", actor: "ann", approved: true, reason: 42 },
        { runId: "d5", name: "ship", actor: "ann", approved: true, reason: "r".repeat(2001) },
        { runId: "d5", name: "note", actor: "ann", approved: true },
        { runId: "d5", name: "", actor: "ann", approved: true },
        null,
      ];
      for (const input of bad) await expect(durable.decide(input as any)).rejects.toThrow(InvalidInputError);
      await expect(durable.decide({ runId: "nope", name: "ship", actor: "ann", approved: true })).rejects.toThrow(
        RunNotFoundError,
      );
      await expect(
        durable.decide({ runId: "d5", name: "ship", actor: "ann", approved: true, workflow: "refund" }),
      ).rejects.toThrow(RunStateConflictError);
      // A plain signal cannot complete an approval's wait.
      await expect(
        durable.signal({ runId: "d5", name: "ship", payload: { approved: true, actor: "x", reason: null } }),
      ).rejects.toThrow(/is an approval/);
      const count = await sql<any>`select (select count(*) from durable_approval_decisions)::int as d,
                                          (select count(*) from durable_signals)::int as s`.execute(db);
      expect(count.rows[0]).toEqual({ d: 0, s: 0 });
      for (const options of [{ limit: 0 }, { limit: 201 }, { tag: "" }, { cursor: "zz" }, { workflow: 5 }]) {
        await expect(durable.approvals(options as any)).rejects.toThrow(InvalidInputError);
      }
    });

    it("a run that has not reached its wait takes no decision", async () => {
      await durable.start(deploy, { service: "s", owner: "o" }, { id: "d6" });
      await expect(durable.decide({ runId: "d6", name: "ship", actor: "ann", approved: true })).rejects.toThrow(
        /not waiting/,
      );
    });

    it("filters by workflow and tag, and pages newest first", async () => {
      for (const id of ["p1", "p2", "p3"]) await startWaiting(durable, id, id === "p2" ? ["vip"] : ["std"]);
      await durable.start(refund, { amount: 5 }, { id: "r1", tags: ["vip"] });
      await durable.advance("r1");
      expect((await durable.approvals({ workflow: "refund" })).approvals.map((a) => a.runId)).toEqual(["r1"]);
      expect((await durable.approvals({ tag: "vip" })).approvals.map((a) => a.runId).sort()).toEqual(["p2", "r1"]);
      expect((await durable.approvals({ tag: "vip", workflow: "deploy" })).approvals.map((a) => a.runId)).toEqual([
        "p2",
      ]);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await durable.approvals({ limit: 1, ...(cursor ? { cursor } : {}) });
        seen.push(...page.approvals.map((a) => a.runId));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(seen.sort()).toEqual(["p1", "p2", "p3", "r1"]);
      // A workflow marked `approvals: { approve: true }` with no signals declared: quorum 1.
      const decided = await durable.decide({ runId: "r1", name: "approve", actor: "ann", approved: true });
      expect(decided).toEqual({ ok: true, completed: true, approvals: 1, quorum: 1 });
      await durable.advance("r1");
      expect((await durable.status("r1"))?.output).toEqual({ approved: true, actor: "ann", reason: null });
    });

    it("defineWorkflow refuses a malformed approvals", () => {
      const base = { name: "w", input: z.object({}), run: async () => null };
      for (const approvals of [
        null,
        [],
        { a: false },
        { a: { quorum: 0 } },
        { a: { quorum: 1.5 } },
        { a: { quorum: 101 } },
        { a: { approvers: "x" } },
      ]) {
        expect(() => defineWorkflow({ ...base, approvals } as any)).toThrow(InvalidInputError);
      }
      expect(() => defineWorkflow({ ...base, signals: { b: z.string() }, approvals: { a: true } })).toThrow(
        /not one of its signals/,
      );
    });
  });
}
