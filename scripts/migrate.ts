// `npm run db:migrate`: applies the durable migrations to DATABASE_URL (Neon, any Postgres), or to
// the local PGlite database in .durable/ when it is unset. Idempotent; safe to run on every deploy.
import { connect, createDurable } from "../lib/durable/index";

const url = process.env.DATABASE_URL;
if (!url) console.warn("DATABASE_URL is not set: migrating the local PGlite database in .durable/");
const durable = createDurable({ db: await connect(url, { poolSize: 1 }), workflows: [] });
try {
  const applied = await durable.migrate();
  console.log(applied.length > 0 ? `applied ${applied.join(", ")}` : "already up to date");
} finally {
  await durable.close();
}
