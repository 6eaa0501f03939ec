// `durable.publish` (docs/guide/events.md): an event inserted with one run of every workflow
// subscribed to it, and its deliveries to the waits on it, in one statement on the instance's
// database or in the app's own transaction (durable_publish; docs/sql.md).
import { randomUUID } from "node:crypto";
import type { Transaction } from "kysely";
import { InvalidInputError, RunStateConflictError } from "../errors";
import type { PublishOptions, PublishResult } from "../event-types";
import { toJsonText } from "../json";
import { storableName } from "../names";
import { type Executor, publishEvent } from "../store";
import { assertOpen, type DurableInstance } from "./instance";
import { prepareRun } from "./prepare-run";
import { eventRunId, subscribersOf } from "./subscriptions";
import { wingTransaction } from "./wings";

/** The scope an event's data is sealed under (engine/payloads.ts): its own, since no run owns it. */
export const eventScope = (eventId: string): string => `event:${eventId}`;

/**
 * Publishes event `name` with `data`: one run per subscribed workflow (input `data`, checked by
 * its schema: a refusal throws InvalidInputError naming the workflow and writes nothing), each
 * with an id derived from the event id and the workflow, so a repeated `id` starts nothing.
 */
export async function publish(
  instance: DurableInstance,
  name: string,
  data: unknown,
  options: PublishOptions = {},
): Promise<PublishResult> {
  assertOpen(instance);
  if (options === null || typeof options !== "object") throw new InvalidInputError("publish: options is an object");
  const eventName = storableName(name, "an event name");
  const eventId = storableName(options.id ?? randomUUID(), "an event id");
  const source = options.source === undefined ? null : storableName(options.source, "an event source");
  const db = transactionOf(options.tx) ?? instance.db;
  if (data === undefined) throw new InvalidInputError(`publish("${eventName}"): data is a JSON value, not undefined`);
  const plainJson = toJsonText(data, { limit: instance.settings.maxResultBytes });
  const plain: unknown = JSON.parse(plainJson);
  const runs = await Promise.all(
    subscribersOf(instance.registry.newest.values(), eventName, plain).map(async (workflow) => {
      const run = prepareRun(
        instance.registry,
        instance.settings.maxResultBytes,
        workflow,
        plain,
        eventRunId(eventId, workflow.name),
      );
      return { ...run, inputJson: await instance.codec.sealJson(run.id, run.inputJson) };
    }),
  );
  const dataJson = await instance.codec.sealJson(eventScope(eventId), plainJson);
  const published = await publishEvent(db, { id: eventId, name: eventName, dataJson, plainJson, source, runs });
  if (published.name !== eventName) {
    throw new RunStateConflictError(`event "${eventId}" was published before under the name "${published.name}"`);
  }
  return { eventId, runs: published.runs.map((run) => ({ workflow: run.workflow, id: run.id })) };
}

/** The store handle over the app's transaction: a Kysely one, or one a loaded wing knows (Drizzle's). */
function transactionOf(tx: unknown): Executor | undefined {
  if (tx === undefined) return undefined;
  if ((tx as Transaction<unknown> | null)?.isTransaction === true) return tx as Executor;
  const handle = wingTransaction(tx);
  if (handle) return handle;
  throw new InvalidInputError(
    "publish: tx is a Kysely transaction (db.transaction().execute(tx => ...)) or a Drizzle one " +
      "(db.transaction(tx => ...), with durable-next/drizzle imported)",
  );
}
