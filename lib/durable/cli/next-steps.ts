// The steps both tools print once the files are in place: the secrets to set (fresh values), the
// database, and where to register a workflow and how to start a run. The secrets and the cron are
// docs/guide/deploying-to-vercel.md; the routes docs/guide/http-routes.md.
import { randomBytes } from "node:crypto";

/** Each secret with a fresh value and what it is for. */
export function secretsStep(cronPath: string): string {
  const signal = `whsec_${randomBytes(32).toString("base64")}`;
  return [
    "Set the secrets (Vercel: Project → Settings → Environment Variables; locally .env.local). In production a",
    "     missing one makes its routes answer 503. Fresh values, for example:",
    `       DURABLE_SECRET=${randomBytes(24).toString("base64url")}     ` +
      "# admin bearer; derives each run's status token",
    `       CRON_SECRET=${randomBytes(24).toString("base64url")}        # Vercel Cron sends it to ${cronPath}`,
    `       DURABLE_SIGNAL_SECRET=${signal}   ` +
      "# Standard Webhooks key(s) for POST /api/durable/signal; comma-separated to rotate",
  ].join("\n");
}

export function databaseStep(): string {
  return [
    "Set DATABASE_URL: your Neon connection string on Vercel (Neon's driver is used for *.neon.tech hosts, or with",
    "     DURABLE_DRIVER=neon), any postgres:// URL elsewhere (node-postgres). " +
      "Unset, runs live in an embedded PGlite in",
    "     ./.durable/ (local development only). The tables (durable_*) are created on first use.",
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
