// The dashboard's bulk form, its server action called as the page calls it (docs/guide/dashboard.md,
// "Operating many runs"): a step that names no run (nothing ticked, or a confirmation that carries
// no id) is refused and changes nothing, as a bulk filter that names nothing is; what names runs
// acts on exactly those. Next's request-bound helpers are stubbed; the access check is
// tests/e2e/operations-dashboard.test.ts's.
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { z } from "zod";
import { connect, createDurable, type Durable, defineWorkflow } from "@/lib/durable";

const held = defineWorkflow({
  name: "held",
  input: z.object({}),
  async run(ctx) {
    await ctx.step.waitForSignal("go");
    return "went";
  },
});

const app = vi.hoisted(() => ({ durable: undefined as Durable | undefined }));
vi.mock("next/cache", () => ({ revalidatePath: () => {} }));
vi.mock("next/server", () => ({ after: () => {} }));
vi.mock("@/app/dashboard-access", () => ({ assertDashboardAccess: async () => {} }));
vi.mock("@/app/durable", () => ({ getDurable: async () => app.durable! }));

const { bulkRuns } = await import("@/app/operations-actions");

beforeAll(async () => {
  app.durable = createDurable({ db: await connect("memory://"), workflows: [held], log: () => {} });
  await app.durable.migrate();
  await app.durable.startMany(held, [{}, {}, {}], { ids: ["b1", "b2", "b3"] });
});
afterAll(() => app.durable?.close());

const form = (entries: [string, string][]) => {
  const data = new FormData();
  for (const [name, value] of entries) data.append(name, value);
  return data;
};
const statuses = async () => Promise.all(["b1", "b2", "b3"].map(async (id) => (await app.durable!.status(id))!.status));

it("refuses a step that names no run, for either operation, and changes nothing", async () => {
  for (const operation of ["cancel", "retry"]) {
    for (const entries of [
      [["operation", operation]],
      [["confirm", operation]],
      [
        ["confirm", operation],
        ["confirmId", ""],
      ],
    ] as [string, string][][]) {
      expect(await bulkRuns(null, form(entries)), JSON.stringify(entries)).toEqual({
        phase: "refused",
        message: expect.any(String),
      });
    }
  }
  expect(await statuses()).toEqual(["pending", "pending", "pending"]);
});

it("acts on exactly the confirmed ids", async () => {
  expect(
    await bulkRuns(
      null,
      form([
        ["operation", "cancel"],
        ["select", "b1"],
        ["select", "b2"],
      ]),
    ),
  ).toEqual({ phase: "confirm", operation: "cancel", ids: ["b1", "b2"] });
  expect(
    await bulkRuns(
      null,
      form([
        ["confirm", "cancel"],
        ["confirmId", "b1"],
        ["confirmId", "b2"],
      ]),
    ),
  ).toMatchObject({ phase: "done", selected: 2, matched: 2, changed: 2 });
  expect(await statuses()).toEqual(["cancelled", "cancelled", "pending"]);
});
