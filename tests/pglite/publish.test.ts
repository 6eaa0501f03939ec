import { drizzle } from "drizzle-orm/pglite";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineWorkflow, InvalidInputError } from "@/lib/durable";
import { createTestDurable } from "@/lib/durable/testing";
import { connect } from "@/lib/durable/drivers/connect";
import { pgliteOf } from "@/lib/durable/drizzle";
import { schema } from "../contract/drizzle-fixtures";
import { runPublishContract } from "../contract/publish-contract";

runPublishContract("PGlite", async () => {
  const db = await connect("memory://");
  return { db, drizzle: drizzle({ client: pgliteOf(db), schema }), close: () => db.destroy() };
});

describe("publish on a database without the durable tables", () => {
  it("a transaction on another database is refused clearly", async () => {
    const durable = await createTestDurable({ workflows: [] });
    const elsewhere = await connect("memory://");
    try {
      const error = await elsewhere
        .transaction()
        .execute((tx) => durable.publish("x", {}, { tx }))
        .catch((e: Error) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toMatch(/this database has no durable_publish: migrate\(\) it/);
    } finally {
      await elsewhere.destroy();
      await durable.close();
    }
  });
});

describe("defineWorkflow({ on })", () => {
  const base = { name: "w", input: z.unknown(), run: async () => 1 };
  it("refuses an `on` that is not an event name or { event, match? }, and a debouncing subscriber", () => {
    for (const on of ["", 5, null, {}, { event: "" }, { event: "a", match: [1] }, { event: "a", match: "x" }]) {
      expect(() => defineWorkflow({ ...base, on } as never), JSON.stringify(on)).toThrow(InvalidInputError);
    }
    expect(() => defineWorkflow({ ...base, on: "a", debounce: { key: () => "k", period: "1s" } } as never)).toThrow(
      /debounces/,
    );
    expect(defineWorkflow({ ...base, on: { event: "a", match: { b: [1] } } }).on).toEqual({
      event: "a",
      match: { b: [1] },
    });
  });
});
