// The scale-out bench's databases (benchscale_*, dropped at the end) and the instance that starts runs.
import { sql } from "kysely";
import { connect, createDurable, type Durable } from "../../../lib/durable";
import { withAdmin } from "../../support/server-database";
import { SERVER_URL } from "../databases";
import { STARTERS } from "./settings";
import type { Secrets } from "./processes";
import { keyedCall, providerCall, threeSteps } from "./app-under-test";

const created = new Set<string>();

/** Drops and creates `benchscale_<name>` on the server; returns its URL. */
export async function freshDatabase(name: string): Promise<string> {
  const full = `benchscale_${name}`;
  created.add(full);
  await withAdmin(async (admin) => {
    await admin.query(`drop database if exists "${full}" with (force)`);
    await admin.query(`create database "${full}"`);
  });
  const url = new URL(SERVER_URL);
  url.pathname = `/${full}`;
  return url.toString();
}

export async function dropDatabases(): Promise<void> {
  await withAdmin(async (admin) => {
    for (const name of created) await admin.query(`drop database if exists "${name}" with (force)`);
  });
  created.clear();
}

/** The bench's own instance on `url`: migrates (a no-op once the app has) and starts runs. */
export async function benchInstance(url: string, secrets: Secrets): Promise<Durable> {
  const durable = createDurable({
    db: await connect(url, { driver: "pg", poolSize: STARTERS }),
    workflows: [providerCall, keyedCall, threeSteps],
    secrets: { durable: secrets.DURABLE_SECRET, cron: secrets.CRON_SECRET },
    log: () => {},
  });
  await durable.migrate();
  return durable;
}

/** Starts `count` runs, STARTERS at a time, then analyzes durable_runs (untimed). */
export async function enqueue(durable: Durable, count: number, start: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: STARTERS }, async () => {
      while (next < count) await start(next++);
    }),
  );
  await sql`analyze durable_runs`.execute(durable.db);
}

export const pad = (i: number) => String(i).padStart(6, "0");
