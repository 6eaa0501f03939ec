// The programs of docs/guide/mcp.md run as written (tests/helpers/guide-examples.ts).
import { runGuideExamples } from "../helpers/guide-examples";

runGuideExamples({
  title: "the programs of the MCP guide",
  page: "docs/guide/mcp.md",
  examples: ["tools-and-tasks.mts", "operator.mts"],
  imports: /from "durable-next\/mcp";/,
});
