// The program of docs/guide/continue-as-new.md runs as written (tests/helpers/guide-examples.ts).
import { runGuideExamples } from "../helpers/guide-examples";

runGuideExamples({
  title: "the program of the continue-as-new guide",
  page: "docs/guide/continue-as-new.md",
  examples: ["poll-loop.mts"],
  imports: /from "durable-next\/testing";/,
});
