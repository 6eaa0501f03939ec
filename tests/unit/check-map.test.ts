// scripts/check-map.ts (part of `npm run lint`) must fail on a file of lib/durable that neither
// docs/layout.md's folder map nor docs/sql.md names, and pass on one that either names.
import { describe, expect, it } from "vitest";
import { unmappedFiles } from "../../scripts/check-map";

const LAYOUT = [
  "# Layout",
  "",
  "## The folders",
  "",
  "```",
  "lib/durable/",
  "  index.ts  types.ts             entry points and vocabulary",
  "  engine/    claim-and-advance (shared by all loops), tick",
  "  store/     every durable_* statement; index.ts lists them",
  "  http/      routes/ (tick, signal)",
  "```",
  "",
  "## Who imports whom",
  "",
  "- `engine/` imports `store/` (the advance is elsewhere).",
].join("\n");
const SQL = "# The SQL\n\n`store/claim-run.ts` calls `durable_claim_run`.\n";

const unmapped = (...files: string[]) =>
  unmappedFiles(
    files.map((file) => `lib/durable/${file}`),
    LAYOUT,
    SQL,
  );

describe("check-map", () => {
  it("passes files named in their folder's entry, at the top, or by path in docs/sql.md", () => {
    expect(
      unmapped("index.ts", "types.ts", "engine/tick.ts", "engine/claim-and-advance.ts", "http/routes/signal.ts"),
    ).toEqual([]);
    expect(unmapped("store/index.ts", "store/claim-run.ts", "store/sql/functions/durable_claim_run.sql")).toEqual([]);
  });

  it("fails a file no map names, and one named only in another folder's entry or outside the map", () => {
    expect(unmapped("engine/claim.ts", "engine/signal.ts", "engine/advance.ts", "store/tick.ts", "next.ts")).toEqual(
      ["engine/claim.ts", "engine/signal.ts", "engine/advance.ts", "store/tick.ts", "next.ts"].map(
        (file) => `lib/durable/${file}`,
      ),
    );
  });

  it("fails a SQL function docs/sql.md does not name; leaves generated, migration and lock files alone", () => {
    expect(unmapped("store/sql/functions/durable_finish_run.sql")).toEqual([
      "lib/durable/store/sql/functions/durable_finish_run.sql",
    ]);
    expect(
      unmapped("store/migrations.generated.ts", "store/migrations/0001_durable.sql", "store/sql/functions.lock"),
    ).toEqual([]);
  });
});
