/**
 * What the dashboard says about each demo: plain data, safe to import from client components.
 * The workflows themselves live next to this file and are registered in app/durable.ts.
 */
export interface DemoInfo {
  /** The workflow's name (the card shows it under the title). */
  workflow: string;
  /** The demo's one name: the card, the run page and the guide's list (docs/guide/dashboard.md, "The demos") use it. */
  title: string;
  /** The Start button's label. */
  cta: string;
  summary: string;
  /** What the run demonstrates, one guarantee per line. */
  shows: string[];
  /** The input the Start button uses. */
  input: Record<string, unknown>;
  /**
   * Words for what came of a completed run, by its output's `status` (app/components/outcome.ts);
   * a status not listed is shown as it reads ("payment_failed": "Payment failed").
   */
  outcomes?: Record<string, string>;
}

export const demos: DemoInfo[] = [
  {
    workflow: "checkout",
    cta: "Start checkout saga",
    title: "Checkout saga",
    summary: "Reserve stock, charge the card, wait for the provider's payment.settled webhook, then confirm the order.",
    shows: [
      "Stock reserved exactly once: a tx step commits with its receipt",
      "The charge uses the external key as idempotency key: a lost response never charges twice",
      "The webhook is delivered twice; the second is recognised as a repeat",
      "No settlement within 15 minutes: refund, then release the stock",
    ],
    input: { sku: "mug", quantity: 1 },
    outcomes: { confirmed: "Order confirmed", cancelled: "Cancelled and refunded", payment_failed: "Payment failed" },
  },
  {
    workflow: "plan-approval",
    cta: "Start plan approval",
    title: "Plan approval",
    summary:
      "A refund plan frozen at start; a person approves it (7-day timeout); one receipt per refund as it executes.",
    shows: [
      "The plan is journaled with step.value: the run executes exactly what was approved",
      "Waiting for a person costs nothing: no process holds the run, only its row",
      "Each refund is its own step: a crash midway never refunds anyone twice",
    ],
    input: {},
    outcomes: { executed: "Plan executed", rejected: "Plan rejected", expired: "No decision in 7 days" },
  },
  {
    workflow: "outbox-delivery",
    cta: "Start outbox delivery",
    title: "Outbox delivery",
    summary:
      "Queue three emails in one transaction, then send each through a flaky email API with retries and backoff.",
    shows: [
      "Retries with exponential backoff (1 s, 2 s, 4 s…) and the provider's retry-after on 429",
      "A send that timed out after the provider accepted it is deduplicated, not mailed twice",
    ],
    input: {},
  },
  {
    workflow: "report-export",
    cta: "Start report export",
    title: "Report export",
    summary: "Submit an export to an external service once, then poll it with waitFor until it is done.",
    shows: [
      "Submitted once, whatever happens to the response",
      "Many polls, one receipt: the final status",
      "A failing poll backs off; it never fails the run",
    ],
    input: {},
  },
  {
    workflow: "research",
    cta: "Start research",
    title: "Research assistant",
    summary:
      "Plan sub-questions with generateObject, answer them with map, have a person approve the outline, " +
      "then stream the answer with streamText as it is written.",
    shows: [
      "Every model call is a receipt: a crash never pays for the same call twice",
      "The plan object is checked against its schema again on every replay",
      "The answer streams to the page while it is written; a reader that reconnects misses nothing",
      "Runs on the app's mock model at /api/mock-model unless AI_GATEWAY_API_KEY or OPENAI_API_KEY is set",
    ],
    input: { question: "Why do durable workflows replay their code from the top?" },
    outcomes: { answered: "Answered", rejected: "Outline rejected", expired: "Outline never approved" },
  },
  {
    workflow: "order",
    cta: "Start order",
    title: "Order of runs",
    summary:
      "Payment and shipping as child runs, then the customer approves by a callback link within 2 minutes; " +
      "the order has a 10-minute deadline.",
    shows: [
      "Two children invoked together: each one's end wakes the order, nothing polls",
      "The approval link races a 2-minute timeout; one branch wins, decided in one write",
      "Declined or too late: the charge is refunded",
      "Past its 10-minute deadline the order fails, whatever it waits for",
    ],
    input: {},
    outcomes: { confirmed: "Order confirmed", declined: "Declined and refunded", expired: "Not approved in time" },
  },
];

/** The outcome labels of a workflow's demo, if it is one. */
export const outcomeLabels = (workflow: string): Record<string, string> =>
  demos.find((demo) => demo.workflow === workflow)?.outcomes ?? {};

/** Demo and sample workflows by name, for labels (the registry in app/durable.ts is the source of truth). */
export const workflowTitles: Record<string, string> = {
  ...Object.fromEntries(demos.map((demo) => [demo.workflow, demo.title])),
  hello: "Hello (sample)",
  approval: "Approval (minimal sample)",
  "order-payment": "Order payment (child of an order)",
  "order-shipping": "Order shipping (child of an order)",
  "support-chat": "Support chat (one turn of a chat)",
  // The built-in workflow of createDurable({ webhooks }) (docs/guide/lifecycle.md): its runs are
  // children of the run each reports, listed under this name on the run page.
  "durable.webhook": "Webhook delivery (of the parent's end)",
};
