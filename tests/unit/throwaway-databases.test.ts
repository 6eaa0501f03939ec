// Throwaway databases are named after TEST_DATABASE_URL's database (or TEST_DATABASE_PREFIX), so two
// checkouts sharing one server, each with its own TEST_DATABASE_URL, never drop each other's.
import { afterEach, describe, expect, it, vi } from "vitest";

async function withEnv(env: Record<string, string>) {
  vi.resetModules(); // the prefix is read once, when the module loads
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  return import("../../scripts/support/server-database");
}

describe("throwaway database names", () => {
  afterEach(() => vi.unstubAllEnvs());

  it("take the prefix from TEST_DATABASE_URL's database name", async () => {
    const one = await withEnv({
      TEST_DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test",
      TEST_DATABASE_PREFIX: "",
    });
    expect(one.throwawayName("durable_racing")).toBe("test_durable_racing");
    expect(one.serverDatabaseUrl("durable_racing")).toBe("postgres://postgres@127.0.0.1:5432/test_durable_racing");

    const other = await withEnv({ TEST_DATABASE_URL: "postgres://postgres@127.0.0.1:5432/Checkout-2" });
    expect(other.throwawayName("durable_racing")).toBe("checkout_2_durable_racing");
  });

  it("take TEST_DATABASE_PREFIX over the database name", async () => {
    const m = await withEnv({
      TEST_DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test",
      TEST_DATABASE_PREFIX: "ci7",
    });
    expect(m.throwawayName("durable_sigkill")).toBe("ci7_durable_sigkill");
  });

  it("refuse a name PostgreSQL would cut or that needs quoting", async () => {
    const m = await withEnv({ TEST_DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test", TEST_DATABASE_PREFIX: "" });
    expect(() => m.throwawayName("x".repeat(60))).toThrow(/at most 63 characters/);
    expect(() => m.throwawayName('bad"name')).toThrow(/\[a-z0-9_\]/);
  });
});
