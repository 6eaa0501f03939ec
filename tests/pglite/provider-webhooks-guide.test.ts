// The programs of docs/guide/provider-webhooks.md run as written (tests/helpers/guide-examples.ts):
// a Stripe delivery and its redelivery through the route, and a source of the app's own.
import { runGuideExamples } from "../helpers/guide-examples";

runGuideExamples({
  title: "the programs of the provider webhooks guide",
  page: "docs/guide/provider-webhooks.md",
  examples: ["stripe.mts", "own-source.mts"],
  imports: /from "durable-next\/next";/,
});
