// The programs of docs/guide/approvals.md run as written (tests/helpers/guide-examples.ts).
import { runGuideExamples } from "../helpers/guide-examples";

runGuideExamples({
  title: "the programs of the approvals guide",
  page: "docs/guide/approvals.md",
  examples: ["approvals.mts", "tool-approvals.mts"],
  imports: /from "durable-next\/testing";/,
});
