// GET /api/durable/runs with the list's filters as query parameters, and POST with tags
// (docs/guide/http-routes.md, "Request bodies"; docs/guide/runs.md, "Finding runs"): each filter
// narrows, status may repeat, and an unknown parameter, a repeat or a bad value is a 422 with
// nothing read or written.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin, createFixture, expectRefused, greet, jsonRequest, type RouteFixture, url } from "./harness";

let fx: RouteFixture;
beforeAll(async () => {
  fx = await createFixture();
});
afterAll(() => fx.durable.close());

const list = async (query: string) => {
  const response = await fx.routes.runs.GET(new Request(url(`/runs?${query}`), { headers: admin }));
  expect(response.status).toBe(200);
  return (await response.json()) as { runs: { id: string; tags: string[]; status: string }[]; nextCursor: string };
};

describe("GET /api/durable/runs filters", () => {
  it("filters by tag, metadata, statuses, version and creation time, and pages with the cursor", async () => {
    const created = await fx.routes.runs.POST(
      jsonRequest("/runs", { workflow: "greet", input: { name: "t" }, id: "tag-1", tags: ["vip", "eu"] }, admin),
    );
    expect(created.status).toBe(201);
    await fx.routes.idle();
    await fx.durable.start(greet, { name: "u" }, { id: "tag-2", tags: ["vip"] });
    await fx.durable.start(greet, { name: "v" }, { id: "tag-3" });
    expect((await list("tag=vip")).runs.map((run) => run.id)).toEqual(["tag-2", "tag-1"]);
    expect((await list("tag=eu")).runs[0]).toMatchObject({ id: "tag-1", tags: ["vip", "eu"] });
    expect((await list("tag=vip&status=pending&status=completed")).runs).toHaveLength(2);
    expect((await list("tag=vip&status=failed,cancelled")).runs).toHaveLength(0);
    expect((await list(`metadata=${encodeURIComponent('{"none":1}')}`)).runs).toHaveLength(0);
    expect((await list("version=9")).runs).toHaveLength(0);
    // Not finished, and no marker of the patch (docs/guide/versions.md, "Patching").
    expect((await list("beforePatch=fraud-check")).runs.map((run) => run.id)).toEqual(["tag-3", "tag-2"]);
    expect(
      (await list(`createdAfter=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).runs,
    ).toEqual([]);
    const first = await list("tag=vip&limit=1");
    expect(first.runs.map((run) => run.id)).toEqual(["tag-2"]);
    const second = await list(`tag=vip&limit=1&cursor=${first.nextCursor}`);
    expect(second.runs.map((run) => run.id)).toEqual(["tag-1"]);
  });

  it("refuses unknown parameters, repeats and bad values with 422, and bad tags on start", async () => {
    for (const query of [
      "stauts=failed",
      "status=sleeping",
      "status=failed,sleeping",
      "tag=a&tag=b",
      "workflow=greet&workflow=approval",
      `tag=${"x".repeat(65)}`,
      "metadata=not-json",
      `metadata=${encodeURIComponent("[1]")}`,
      "createdAfter=yesterday",
      "createdBefore=2025-13-45",
      "beforePatch=",
      `beforePatch=${"p".repeat(250)}`,
      // A filter that names nothing once parsed: refused, not taken as "every run".
      `metadata=${encodeURIComponent("{}")}`,
      "metadata=",
      "tag=",
      "workflow=",
      "parentId=",
      "status=",
      "createdAfter=",
    ]) {
      await expectRefused(
        fx,
        () => fx.routes.runs.GET(new Request(url(`/runs?${query}`), { headers: admin })),
        422,
        "invalid_input",
      );
    }
    for (const tags of [Array.from({ length: 11 }, (_, n) => `t${n}`), ["x".repeat(65)], "vip", [1]]) {
      await expectRefused(
        fx,
        () => fx.routes.runs.POST(jsonRequest("/runs", { workflow: "greet", input: { name: "x" }, tags }, admin)),
        422,
        "invalid_input",
      );
    }
  });
});
