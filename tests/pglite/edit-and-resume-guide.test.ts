// The programs of docs/guide/edit-and-resume.md run as written (tests/helpers/guide-examples.ts).
import { runGuideExamples } from "../helpers/guide-examples";

runGuideExamples({
  title: "the programs of the edit-and-resume guide",
  page: "docs/guide/edit-and-resume.md",
  examples: ["edit-and-resume.mts", "replay-test.mts"],
  imports: /from "durable-next(\/testing)?";/,
});
