// Behind PgBouncer 1.18 in transaction mode (no protocol-level prepared statements: 1.21 added
// them), `preparedStatements: false` works, and with them on the error says to turn them off
// (docs/performance.md, "Prepared statements"). It needs Debian's pgbouncer (README: the apt line
// beside `npm test`), and fails where it is absent rather than pass untested.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { connect, createDurable, defineWorkflow, type Durable } from "@/lib/durable";
import { createTestDatabase } from "../helpers/databases";
import { pgbouncerBinary, startPgbouncer } from "../helpers/pgbouncer";

const binary = pgbouncerBinary();

const threeSteps = defineWorkflow({
  name: "bouncer-three-steps",
  input: z.object({}),
  async run(ctx) {
    for (const id of ["a", "b", "c"]) await ctx.step.run(id, () => id);
    return "done";
  },
});

describe("behind PgBouncer in transaction mode", () => {
  let bouncer: Awaited<ReturnType<typeof startPgbouncer>>;
  let direct: string;
  const opened: Durable[] = [];
  /** A durable on its own one-client pool through the bouncer. */
  const through = async (preparedStatements: boolean) => {
    const db = await connect(bouncer.url(direct), { driver: "pg", poolSize: 1 });
    const durable = createDurable({ db, workflows: [threeSteps], preparedStatements });
    opened.push(durable);
    return durable;
  };

  beforeAll(async () => {
    if (!binary) throw new Error("pgbouncer is not installed: apt-get install -y pgbouncer (README, next to npm test)");
    direct = await createTestDatabase("durable_prepared_bouncer");
    const setup = createDurable({ db: await connect(direct, { driver: "pg" }), workflows: [threeSteps] });
    opened.push(setup);
    await setup.migrate();
    // One server connection: two clients' transactions take turns on the same session.
    bouncer = await startPgbouncer(binary!, direct, 1);
  });
  afterAll(async () => {
    for (const durable of opened) await durable.close();
    await bouncer?.stop();
  });

  it("with preparedStatements: false, runs start, drain and read back through two pools", async () => {
    const [a, b] = [await through(false), await through(false)];
    for (let i = 0; i < 10; i++) await (i % 2 ? a : b).start(threeSteps, {}, { id: `off-${i}` });
    const drained = await Promise.all([a.tick({ budgetMs: 40_000 }), b.tick({ budgetMs: 40_000 })]);
    expect(drained[0].completed + drained[1].completed).toBe(10);
    for (let i = 0; i < 10; i++) {
      expect(await (i % 2 ? b : a).status(`off-${i}`)).toMatchObject({ status: "completed", output: "done" });
    }
  });

  it("with them on, a second pool preparing on that session fails saying to turn them off", async () => {
    const [a, b] = [await through(true), await through(true)];
    await a.start(threeSteps, {}, { id: "on-1" });
    expect(await a.status("on-1")).toMatchObject({ status: "pending" });
    // b's Parse of the same statement name lands on the server session a prepared it on.
    await expect(b.status("on-1")).rejects.toThrow(
      /prepared statement .* already exists .*preparedStatements: false.*DURABLE_PREPARED_STATEMENTS=false/,
    );
    expect(await b.status("on-1")).toMatchObject({ status: "pending" });
  });
});
