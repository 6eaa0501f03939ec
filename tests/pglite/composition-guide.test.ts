// The programs of docs/guide/composition.md run as written (tests/helpers/guide-examples.ts).
import { runGuideExamples } from "../helpers/guide-examples";

runGuideExamples({
  title: "the programs of the composition guide",
  page: "docs/guide/composition.md",
  examples: ["child-runs.mts", "races.mts", "deadlines.mts", "callbacks.mts"],
  imports: /from "durable-next\/testing";/,
});
