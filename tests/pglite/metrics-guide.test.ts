// The programs of docs/guide/metrics.md run as written (tests/helpers/guide-examples.ts).
import { runGuideExamples } from "../helpers/guide-examples";

runGuideExamples({
  title: "the programs of the metrics guide",
  page: "docs/guide/metrics.md",
  examples: ["scrape.mts", "alert.mts", "otel.mts"],
  imports: /from "durable-next(\/[\w-]+)?";/,
});
