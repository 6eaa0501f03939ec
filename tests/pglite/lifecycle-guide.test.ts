// The programs of docs/guide/lifecycle.md run as written (tests/helpers/guide-examples.ts).
import { runGuideExamples } from "../helpers/guide-examples";

runGuideExamples({
  title: "the programs of the lifecycle guide",
  page: "docs/guide/lifecycle.md",
  examples: ["hooks.mts", "webhooks.mts"],
  imports: /from "durable-next\/testing";/,
});
