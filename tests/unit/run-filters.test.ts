// The dashboard's list filters (docs/guide/dashboard.md): the "Before patch" field writes
// `beforePatch` into the URL, which the status tabs and the pager keep (docs/guide/versions.md,
// "Patching"); tests/routes/runs-filters.test.ts and the patching contract check what it finds.
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { expect, it } from "vitest";
import { listHref, RunFilters } from "@/app/components/run-filters";

it("keeps beforePatch in the list's URL and shows it in its field, with Clear", () => {
  expect(listHref({ status: "waiting", workflow: "order", beforePatch: "fraud-check" })).toBe(
    "/?status=waiting&workflow=order&beforePatch=fraud-check",
  );
  expect(listHref({ beforePatch: "a b" }, "c1")).toBe("/?beforePatch=a+b&cursor=c1");
  const html = renderToString(
    createElement(RunFilters, { filters: { beforePatch: "fraud-check" }, workflows: ["order"] }),
  );
  expect(html).toMatch(/<span>Before patch<\/span><input [^>]*name="beforePatch" value="fraud-check"/);
  expect(html).toContain(">Clear</a>");
  expect(renderToString(createElement(RunFilters, { filters: {}, workflows: [] }))).not.toContain(">Clear</a>");
});
