// The steps both tools print once the files are in place: the secrets to set (fresh values only
// for an app that has none yet), the database, the public origin, and where to register a workflow
// and how to start a run. The secrets, the cron and DURABLE_BASE_URL are
// docs/guide/deploying-to-vercel.md; the routes docs/guide/http-routes.md.
import { randomBytes } from "node:crypto";
import { SECRET_NAMES, type SecretEnvName } from "./env-secrets";

const SECRET_USES: Record<SecretEnvName, (cronPath: string) => string> = {
  DURABLE_SECRET: () => "admin bearer; derives each run's status token and callback URLs",
  CRON_SECRET: (cronPath) => `Vercel Cron sends it to ${cronPath}`,
  DURABLE_SIGNAL_SECRET: () => "Standard Webhooks key(s) for POST /api/durable/signal; comma-separated to rotate",
};

const fresh: Record<SecretEnvName, () => string> = {
  DURABLE_SECRET: () => randomBytes(24).toString("base64url"),
  CRON_SECRET: () => randomBytes(24).toString("base64url"),
  DURABLE_SIGNAL_SECRET: () => `whsec_${randomBytes(32).toString("base64")}`,
};

/**
 * The secrets step. `existing` (env-secrets.ts) maps each secret the app already sets to where;
 * with any of them set, or on an upgrade (`upgrade`: the tool's record was there, so values were
 * printed before), no value is printed: the set ones are kept, and a missing one is named with a
 * command that makes one.
 */
export function secretsStep(cronPath: string, existing = new Map<SecretEnvName, string>(), upgrade = false): string {
  const head =
    "Set the secrets (Vercel: Project → Settings → Environment Variables; locally .env.local). In production a\n" +
    "     missing one makes its routes answer 503 (and says so once in the log).";
  if (existing.size === 0 && !upgrade)
    return [
      `${head} Fresh values, for example:`,
      ...SECRET_NAMES.map((name) => `       ${name}=${fresh[name]()}   # ${SECRET_USES[name](cronPath)}`),
    ].join("\n");
  const why = existing.size > 0 ? "the app sets some already" : "this app ran init before";
  const lines = SECRET_NAMES.map((name) => {
    const where = existing.get(name);
    const use = SECRET_USES[name](cronPath);
    if (where) return `       ${name}: kept (set in ${where}; ${use})`;
    const prefix = name === "DURABLE_SIGNAL_SECRET" ? "'whsec_'+" : "";
    return (
      `       ${name}: not found here (${use}); keep the value your deployment has, else make one:\n` +
      `         node -e "console.log(${prefix}require('crypto').randomBytes(32).toString('base64'))"`
    );
  });
  return [
    `${head} No new values (${why}): a new DURABLE_SECRET would break every status link and`,
    "     callback URL already handed out, a new DURABLE_SIGNAL_SECRET every sender's signatures.",
    ...lines,
  ].join("\n");
}

/** DURABLE_BASE_URL: the origin of callback URLs, which VERCEL_URL makes a protected deployment address. */
export function baseUrlStep(): string {
  return [
    "On Vercel, set DURABLE_BASE_URL to the app's public origin (e.g. https://shop.example.com): callback URLs",
    "     (ctx.step.callback) otherwise use VERCEL_URL, the deployment's own address, which Vercel's",
    "     Deployment Protection keeps behind a login, so a third party's callback never arrives.",
  ].join("\n");
}

/** `migrate`: the command that migrates DATABASE_URL at deploy, when the tool's user has one. */
export function databaseStep(migrate?: string): string {
  const tables = "The tables (durable_*) are created on first use";
  return [
    "Set DATABASE_URL: your Neon connection string on Vercel (Neon's driver is used for *.neon.tech hosts, or with",
    "     DURABLE_DRIVER=neon), any postgres:// URL elsewhere (node-postgres). " +
      "Unset, runs live in an embedded PGlite in",
    migrate
      ? `     ./.durable/ (local development only). ${tables}, or at each deploy with:\n       ${migrate}`
      : `     ./.durable/ (local development only). ${tables}.`,
  ].join("\n");
}

/** Provider webhooks (docs/guide/provider-webhooks.md): the events route takes them once its secret is set. */
export function providerWebhooksStep(): string {
  return [
    "Optional, provider webhooks as events (workflows subscribe with defineWorkflow({ on })): set",
    "     STRIPE_WEBHOOK_SECRET (its whsec_… signing secret) and point Stripe at /api/durable/events/stripe,",
    "     or GITHUB_WEBHOOK_SECRET and point GitHub at /api/durable/events/github. Unset, those paths answer 404.",
  ].join("\n");
}

export interface WorkflowStepOptions {
  /** Where defineWorkflow is imported from ("durable-next", "lib/durable"). */
  defineFrom: string;
  /** The instance file, the app's workflow registry. */
  registry: string;
  /** The instrumentation file that starts the local cron. */
  devCronFile: string;
  cronPath: string;
}

/** Where a workflow is registered, how to start and read a run, and who wakes it. */
export function workflowStep({ defineFrom, registry, devCronFile, cronPath }: WorkflowStepOptions): string {
  return [
    `Write a workflow (defineWorkflow from ${defineFrom}) and register it: add it to the workflows list`,
    `     in ${registry}, the list that file hands to createAppDurable({ workflows }):`,
    "       export const workflows = [welcome];",
    "     then start a run:",
    `       curl -X POST localhost:3000/api/durable/runs -H "authorization: Bearer $DURABLE_SECRET" \\`,
    `            -H "content-type: application/json" -d '{"workflow":"welcome","input":{"email":"a@example.com"}}'`,
    "     and read it with the statusToken it answers: " +
      "GET /api/durable/runs/<id>, Authorization: Bearer <statusToken>.",
    "     Runs advance right after each start, signal and status read; the cron is the backstop that wakes",
    "     sleeps and retry delays nobody looks at. Under next dev the local cron stands in for Vercel Cron",
    `     (${devCronFile}: at each run's wake time, at least every 5 s); in production Vercel Cron calls`,
    `     ${cronPath} (vercel.json).`,
    `     (Vercel's Hobby plan allows daily crons only: there, make the schedule of ${cronPath} daily, ` +
      `e.g. "0 3 * * *".)`,
  ].join("\n");
}

/** Prints the numbered steps. */
export function printSteps(steps: string[]) {
  console.log(`\nNext steps`);
  for (const [i, step] of steps.entries()) console.log(`  ${i + 1}. ${step}`);
}
