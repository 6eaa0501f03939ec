import { sql } from "kysely";
import { InvalidInputError, RunStateConflictError } from "../errors";
import { msOrNull, type RunToInsert, runRow } from "./insert-run";
import type { Executor } from "./tables";

/** An event to publish, with the runs of the workflows subscribed to it (their inputs sealed). */
export interface EventToPublish {
  id: string;
  name: string;
  /** The data as stored: sealed when encryption is on. */
  dataJson: string;
  /** The data in plain JSON: matched against the waits' `match` in the statement, never stored. */
  plainJson: string;
  source: string | null;
  runs: readonly RunToInsert[];
}

export interface PublishedEvent {
  /** This statement inserted the event (false: its id was published before, and nothing started). */
  created: boolean;
  /** The name the event is stored under. */
  name: string;
  /** The runs of `runs` that exist, in the order given. */
  runs: { id: string; workflow: string }[];
}

/**
 * Inserts the event, its subscribers' runs and its deliveries to waiting event steps in one
 * statement (durable_publish), on `db` or on the app's transaction.
 * @throws RunStateConflictError when a run could not start because its singleton key is held
 * @throws InvalidInputError when `db` is a transaction that is not read committed, or on a database
 *   without the durable tables (another database, or not migrated)
 */
export async function publishEvent(db: Executor, event: EventToPublish): Promise<PublishedEvent> {
  const runs = event.runs.map((run) => ({
    ...runRow(run),
    deadline_in_ms: msOrNull(run.deadlineInMs),
    followups: run.followups ?? null,
  }));
  try {
    const { rows } = await sql<{ published: PublishedEvent }>`
      select durable_publish(${event.id}, ${event.name}, ${event.dataJson}::jsonb, ${event.source}::text,
                             ${event.plainJson}::jsonb, ${JSON.stringify(runs)}::jsonb) as published`.execute(db);
    const published = rows[0]!.published;
    return typeof published === "string" ? JSON.parse(published) : published;
  } catch (error) {
    const message = error instanceof Error ? error.message : "";
    if (message.startsWith("durable_publish: run ")) {
      throw new RunStateConflictError(`event "${event.id}": ${message.slice("durable_publish: ".length)}`);
    }
    if (message.startsWith("durable_publish: ")) throw new InvalidInputError(message.slice("durable_publish: ".length));
    if ((error as { code?: string }).code === "42883" && message.includes("durable_publish")) {
      throw new InvalidInputError(
        "publish: this database has no durable_publish: migrate() it, and give publish a transaction on the " +
          "durable store's database",
        { cause: error },
      );
    }
    throw error;
  }
}
