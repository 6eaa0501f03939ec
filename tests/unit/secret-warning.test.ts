// The development fallback for DURABLE_SECRET warns when a secret is first needed (a status token
// read), never because a run was started or a module was imported.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";

describe("the missing-secret warning", () => {
  beforeEach(() => {
    vi.resetModules(); // the "warned once" memory lives in the module: start from a fresh one
    vi.stubEnv("DURABLE_SECRET", "");
    vi.stubEnv("NODE_ENV", "test");
  });
  afterEach(() => vi.unstubAllEnvs());

  it("is silent through import and start, and warns once when a status token is first read", async () => {
    const { connect, createDurable, defineWorkflow } = await import("@/lib/durable");
    const hello = defineWorkflow({ name: "hello", input: z.object({}), run: async () => "hi" });
    const messages: string[] = [];
    const durable = createDurable({ db: await connect("memory://"), workflows: [hello], log: (m) => messages.push(m) });
    await durable.migrate();
    try {
      const started = await durable.start(hello, {}, { id: "quiet" });
      expect(started.id).toBe("quiet");
      expect(messages).toEqual([]);

      const token = started.statusToken;
      expect(token).toBe(durable.statusToken("quiet"));
      expect(JSON.parse(JSON.stringify(started))).toEqual({ id: "quiet", created: true, statusToken: token });
      expect(messages).toHaveLength(1);
      expect(messages[0]).toContain("DURABLE_SECRET is not set");
    } finally {
      await durable.close();
    }
  });

  it("never warns under the test harness, which brings its own secret", async () => {
    const { defineWorkflow } = await import("@/lib/durable");
    const { createTestDurable } = await import("@/lib/durable/testing");
    const hello = defineWorkflow({ name: "hello", input: z.object({}), run: async () => "hi" });
    const messages: string[] = [];
    const durable = await createTestDurable({ workflows: [hello], log: (m) => messages.push(m) });
    try {
      const started = await durable.start(hello, {}, { id: "harness" });
      expect(started.statusToken).toMatch(/\S{16,}/);
      expect(messages).toEqual([]);
    } finally {
      await durable.close();
    }
  });
});
