// The programs of docs/guide/versions.md, "Patching", run as written (tests/helpers/guide-examples.ts).
import { runGuideExamples } from "../helpers/guide-examples";

runGuideExamples({
  title: "the programs of the patching guide",
  page: "docs/guide/versions.md",
  examples: ["patching.mts", "deprecating.mts"],
  imports: /from "durable-next";/,
});
