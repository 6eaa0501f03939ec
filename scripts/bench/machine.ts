// What the figures were measured on.
import { readFileSync } from "node:fs";
import os from "node:os";
import pg from "pg";
import { SERVER_URL } from "./databases";

export interface Machine {
  cores: number;
  cpu: string;
  node: string;
  postgres: string;
  pglite: string;
  settings: Record<string, string>;
  load: string;
}

export const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

export async function machine(): Promise<Machine> {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  const version = (await client.query("show server_version")).rows[0].server_version as string;
  const settings: Record<string, string> = {};
  for (const name of ["fsync", "synchronous_commit", "shared_buffers", "autovacuum"]) {
    settings[name] = (await client.query(`show ${name}`)).rows[0][name];
  }
  await client.end();
  const pkg = JSON.parse(
    readFileSync(new URL("../../node_modules/@electric-sql/pglite/package.json", import.meta.url), "utf8"),
  );
  return {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model.trim() ?? "unknown",
    node: process.version,
    postgres: version,
    pglite: pkg.version,
    settings,
    load: loadAverage(),
  };
}
