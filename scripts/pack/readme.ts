// The README the package ships: install, init, where the guide is. The guide itself is the
// repository's docs/guide/ (docs/guide/installing.md is this page at length).

export const packageReadme = (version: string) => `# durable-next

Durable multi-step runs for Next.js on Vercel, with nothing but Postgres and ordinary route
handlers: a run survives being killed at any point, with no worker process and no hosted
orchestrator. Version ${version}.

## Install

\`\`\`sh
npm install durable-next zod
npx durable-next init            # --dry-run shows what it would write
\`\`\`

\`init\` writes the route files under \`app/api/durable\`, \`app/durable.ts\` (where you register
your workflows), the cron in \`vercel.json\`, an \`instrumentation.ts\` that runs a local cron
under \`next dev\`, and the settings \`next.config\` needs. It never overwrites a file it did not
write, and prints the secrets to set (\`DURABLE_SECRET\`, \`CRON_SECRET\`,
\`DURABLE_SIGNAL_SECRET\`) and \`DATABASE_URL\` (unset: an embedded PGlite in \`.durable/\`).

\`\`\`ts
import { defineWorkflow, createAppDurable } from "durable-next";
import { createDurableRoutes, startDevCron } from "durable-next/next";
import { useDurableRun, useDurableStream } from "durable-next/react";
import { createTestDurable } from "durable-next/testing";
\`\`\`

## Upgrade

\`npm update durable-next\`: the database migrates itself on first use (\`migrate()\`), and
\`npx durable-next init\` again refreshes the files it wrote that you did not change.

## Docs

The guide is \`docs/guide/\` in the durable-next repository: start with \`installing.md\`, then
\`runs.md\`, \`steps.md\` and \`signals-and-webhooks.md\`. The SQL migrations and functions ship in
this package under \`store/migrations/\` and \`store/sql/functions/\`.
`;
