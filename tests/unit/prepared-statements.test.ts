// The naming of hot statements on a pool's clients (lib/durable/drivers/prepared-statements.ts),
// over a fake pool: what each send becomes, the bound per connection, and a pooler's refusal.
import { expect, it } from "vitest";
import {
  PREPARED_PER_CONNECTION,
  statementNameOf,
  withPreparedStatements,
} from "@/lib/durable/drivers/prepared-statements";

type Sent = string | { name: string; text: string; values?: unknown[] };

/** A pool of one client that records what it was asked to send, failing sends `fail` picks. */
function fakePool(fail: (sent: Sent) => Error | undefined = () => undefined) {
  const sent: Sent[] = [];
  const client = {
    query: async (textOrConfig: Sent, _values?: unknown[]) => {
      sent.push(textOrConfig);
      const error = fail(textOrConfig);
      if (error) throw error;
      return { rows: [] };
    },
    release: () => {},
  };
  return { sent, client, pool: { connect: async () => client as never, end: async () => {} } };
}

it("names durable function calls while on, sends other texts and everything while off unnamed", async () => {
  const { sent, pool } = fakePool();
  const toggle = { on: true };
  const named = withPreparedStatements(pool, toggle);
  const client = await named.connect();
  const call = "select durable_heartbeat($1, $2::bigint) as state";
  await client.query(call, ["r", 1]);
  await client.query("select 1", []);
  const cursor = { text: call, submit: () => {} }; // Kysely's streamQuery passes a cursor object
  await client.query(cursor as never, undefined as never);
  toggle.on = false;
  await client.query(call, ["r", 2]);
  expect(sent).toEqual([{ name: statementNameOf(call), text: call, values: ["r", 1] }, "select 1", cursor, call]);
  // Patched once: the same client handed out again is not wrapped twice.
  expect(await named.connect()).toBe(client);
});

it(`prepares at most ${PREPARED_PER_CONNECTION} statements per connection; texts past them go unnamed`, async () => {
  const { sent, pool } = fakePool();
  const client = await withPreparedStatements(pool, { on: true }).connect();
  const texts = Array.from({ length: PREPARED_PER_CONNECTION + 5 }, (_, i) => `select durable_f${i}($1::int)`);
  for (const text of texts) await client.query(text, [1]);
  await client.query(texts[0]!, [2]); // a statement it prepared stays named
  const named = sent.filter((s) => typeof s !== "string");
  expect(named).toHaveLength(PREPARED_PER_CONNECTION + 1);
  expect(sent.slice(PREPARED_PER_CONNECTION, -1).every((s) => typeof s === "string")).toBe(true);
});

it("a pooler's refusal says to turn prepared statements off; that text goes unnamed after", async () => {
  const refusal = Object.assign(new Error('prepared statement "x" does not exist'), { code: "26000" });
  const { sent, pool } = fakePool((s) => (typeof s === "string" ? undefined : refusal));
  const client = await withPreparedStatements(pool, { on: true }).connect();
  const call = "select durable_heartbeat($1, $2::bigint) as state";
  const error = await client.query(call, ["r", 1]).catch((e: unknown) => e);
  expect(error).toBe(refusal);
  expect(refusal.code).toBe("26000");
  expect(refusal.message).toMatch(/preparedStatements: false.*DURABLE_PREPARED_STATEMENTS=false/);
  await client.query(call, ["r", 2]);
  expect(sent.at(-1)).toBe(call);
});

it("other errors pass through untouched and the statement stays named", async () => {
  const failure = Object.assign(new Error("division by zero"), { code: "22012" });
  let failing = true;
  const { sent, pool } = fakePool(() => (failing ? failure : undefined));
  const client = await withPreparedStatements(pool, { on: true }).connect();
  const call = "select durable_heartbeat($1, $2::bigint) as state";
  await expect(client.query(call, ["r", 1])).rejects.toThrow(/^division by zero$/);
  failing = false;
  await client.query(call, ["r", 2]);
  expect(sent.at(-1)).toMatchObject({ name: statementNameOf(call) });
});
