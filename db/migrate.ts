// `npm run db:migrate`: applies the toolkit's migrations and the app's own schema to DATABASE_URL
// (Neon, any Postgres), or to the local PGlite database in .durable/ when it is unset. Idempotent;
// safe to run on every deploy.
import { connect, createDurable } from "../lib/durable/index";
import { ensureAppSchema } from "./app-schema";

const url = process.env.DATABASE_URL;
if (!url) console.warn("DATABASE_URL is not set: migrating the local PGlite database in .durable/");
const durable = createDurable({ db: await connect(url, { poolSize: 1 }), workflows: [] });
try {
  const applied = await durable.migrate();
  console.log(applied.length > 0 ? `applied ${applied.join(", ")}` : "durable tables already up to date");
  await ensureAppSchema(durable.db);
  console.log("app schema in place (db/app-schema.ts)");
} finally {
  await durable.close();
}
