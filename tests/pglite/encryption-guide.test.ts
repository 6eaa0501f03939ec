// The programs of docs/guide/encryption.md run as written (tests/helpers/guide-examples.ts): the
// sealed example on createTestDurable, and "Rotating keys" and "A missing key" on createDurable.
import { runGuideExamples } from "../helpers/guide-examples";

runGuideExamples({
  title: "the example of the encryption guide",
  page: "docs/guide/encryption.md",
  examples: ["sealed.mts"],
  imports: /from "durable-next\/testing";/,
  partOfPage: true,
});

runGuideExamples({
  title: "the rotation and missing-key programs of the encryption guide",
  page: "docs/guide/encryption.md",
  examples: ["rotating-keys.mts", "missing-key.mts"],
  imports: /from "durable-next";/,
  partOfPage: true,
});
