// The plan of every statement a session runs from now on, those inside SQL functions too: what the
// plan tests read to show a lookup uses its index whatever plpgsql cached (auto_explain, loaded
// into the session and logging each plan at notice level).
import type pg from "pg";

/** Starts auto_explain on `session`; the array it answers fills with each plan as it is printed. */
export async function collectNestedPlans(session: pg.Client): Promise<string[]> {
  const plans: string[] = [];
  await session.query("load 'auto_explain'");
  for (const setting of [
    "auto_explain.log_min_duration = 0",
    "auto_explain.log_nested_statements = on",
    "auto_explain.log_level = notice",
    "client_min_messages = notice",
  ]) {
    await session.query(`set ${setting}`);
  }
  session.on("notice", (notice) => plans.push(notice.message ?? ""));
  return plans;
}
