// The programs of docs/guide/events.md run as written (tests/helpers/guide-examples.ts).
import { runGuideExamples } from "../helpers/guide-examples";

runGuideExamples({
  title: "the programs of the events guide",
  page: "docs/guide/events.md",
  examples: ["publish.mts", "outbox.mts"],
  imports: /from "durable-next\/testing";/,
});
