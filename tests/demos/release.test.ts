// The release demo (app/workflows/release.ts) on the test harness: two approvers other than the
// author ship it; one reject stops it; nobody within 7 days times it out.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { release } from "@/app/workflows/release";
import { NotAnApproverError } from "@/lib/durable";
import { createTestDurable, type TestDurable } from "@/lib/durable/testing";

let durable: TestDurable;
beforeAll(async () => {
  durable = await createTestDurable({ workflows: [release] });
});
afterAll(() => durable.close());

describe("release", () => {
  it("ships once two people other than the author approve", async () => {
    await durable.run(release, { service: "api", author: "olivia" }, { id: "rel-ship" });
    await expect(durable.decide({ runId: "rel-ship", name: "ship", actor: "olivia", approved: true })).rejects.toThrow(
      NotAnApproverError,
    );
    expect((await durable.decide({ runId: "rel-ship", name: "ship", actor: "ann", approved: true })).completed).toBe(
      false,
    );
    expect((await durable.decide({ runId: "rel-ship", name: "ship", actor: "bob", approved: true })).completed).toBe(
      true,
    );
    await durable.drive("rel-ship");
    expect((await durable.status("rel-ship"))?.output).toEqual({ service: "api", shipped: true, by: "bob" });
  });

  it("stops at one reject, and times out after 7 days without a decision", async () => {
    await durable.run(release, { service: "web", author: "olivia" }, { id: "rel-stop" });
    await durable.decide({ runId: "rel-stop", name: "ship", actor: "cat", approved: false, reason: "freeze" });
    await durable.drive("rel-stop");
    expect((await durable.status("rel-stop"))?.output).toEqual({
      service: "web",
      shipped: false,
      by: "cat",
      reason: "freeze",
    });
    await durable.run(release, { service: "db", author: "olivia" }, { id: "rel-late" });
    await durable.testing.advanceClock("7d");
    await durable.drive("rel-late");
    expect((await durable.status("rel-late"))?.output).toEqual({
      service: "db",
      shipped: false,
      reason: "no decision within 7 days",
    });
  });
});
