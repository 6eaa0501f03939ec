// The run page links a chain of ctx.continueAsNew both ways (docs/guide/continue-as-new.md):
// "continued from ←" on a successor, "continued as →" on the run that continued.
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { RunHead } from "@/app/components/run-head";
import type { RunStatus } from "@/lib/durable";

const run = (fields: Partial<RunStatus>): RunStatus => ({
  id: "feed~1",
  workflow: "poll-feed",
  version: null,
  status: "completed",
  createdAt: "2026-12-04T10:00:00.000Z",
  updatedAt: "2026-12-04T10:00:01.000Z",
  wakeAt: null,
  waitingFor: null,
  output: null,
  error: null,
  attempts: 1,
  warnings: [],
  steps: [],
  ...fields,
});
const head = (r: RunStatus) =>
  renderToString(createElement(RunHead, { run: r, title: "Run", demo: null, outcome: null, clock: 0, terminal: true }));

describe("the run page's head in a chain", () => {
  it("links the run it continues and the run it continued as", () => {
    const html = head(run({ continuedFrom: "feed", continuedAs: "feed~2" }));
    expect(html).toMatch(/data-testid="continued-from"[^>]*>← Continued from <a href="[^"]*\/runs\/feed"/);
    expect(html).toMatch(/data-testid="continued-as"[^>]*>Continued as <a href="[^"]*\/runs\/feed~2"/);
  });

  it("shows neither for a run outside a chain", () => {
    const html = head(run({ continuedFrom: null, continuedAs: null }));
    expect(html).not.toContain("continued-from");
    expect(html).not.toContain("continued-as");
  });
});
