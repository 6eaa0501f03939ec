// `durable.reencrypt(filter)` (docs/guide/encryption.md, "Rotating keys"): every stored payload of
// the runs a filter matches rewritten under the newest sealing key, a batch of runs per
// transaction, beside owners that keep running.
import type { PayloadCodec } from "../encryption/payload-codec";
import { InvalidInputError } from "../errors";
import {
  inTransaction,
  lockRunBatch,
  PAYLOAD_COLUMNS,
  type RunPosition,
  type RunQuery,
  readPayloads,
  type StoredPayload,
  writePayload,
} from "../store";
import { checkRange } from "./check-range";
import type { RunFilterOptions } from "./durable-api";
import { assertOpen, type DurableInstance } from "./instance";
import { withDeadlockRetry } from "./operations";
import { sealError } from "./payloads";
import { checkRunFilter } from "./run-filter";

/** Runs per transaction unless `batchSize` says otherwise. */
export const REENCRYPT_BATCH = 100;

/**
 * Rewrites the payloads of every run `filter` matches (list's filter; `{}`: every run) under the
 * sealing key: each value is opened and sealed again under its run's id, and written only when
 * that changed it (a value already sealed under the key is sealed to the same envelope). Without
 * a sealing key (only decrypt-only keys), values are written plain. Batches of `batchSize` runs,
 * newest first, each one transaction that locks its runs' rows first: a receipt, a delivery or a
 * cancel of one of them waits for it, so nothing written after it read is overwritten.
 *
 * @returns the runs walked and the values rewritten
 * @throws DecryptionError naming the key when a value of a batch names a key not configured:
 *   nothing of that batch is written (the batches before it are)
 */
export async function reencryptRuns(
  instance: DurableInstance,
  filter: RunFilterOptions = {},
  options: { batchSize?: number } = {},
): Promise<{ runs: number; values: number }> {
  assertOpen(instance);
  const query = checkRunFilter(filter, "reencrypt");
  if (options === null || typeof options !== "object") throw new InvalidInputError("reencrypt: options is an object");
  const batchSize = checkRange("batchSize", options.batchSize ?? REENCRYPT_BATCH, 1, 1000, "whole number");
  let after: RunPosition | undefined;
  const total = { runs: 0, values: 0 };
  for (;;) {
    const position = after;
    // A batch locks its runs newest first, not by the lock order (docs/sql.md, "Lock order"): a
    // cycle with a cancel's cascade rolls it back whole, and it is sent again.
    const batch = await withDeadlockRetry(() => reencryptBatch(instance, query, position, batchSize));
    total.runs += batch.ids.length;
    total.values += batch.values;
    if (batch.ids.length < batchSize || !batch.last) return total;
    after = batch.last;
  }
}

/** One batch: its runs locked, each payload rewritten when sealing it again changed it. */
function reencryptBatch(
  instance: DurableInstance,
  query: RunQuery,
  after: RunPosition | undefined,
  batchSize: number,
): Promise<{ ids: string[]; last: RunPosition | null; values: number }> {
  return inTransaction(instance.db, async (tx) => {
    const picked = await lockRunBatch(tx, query, after, batchSize);
    let values = 0;
    for (const column of PAYLOAD_COLUMNS) {
      for (const payload of await readPayloads(tx, column, picked.ids)) {
        const json = await resealed(instance.codec, payload);
        if (json !== null) {
          await writePayload(tx, payload, json);
          values++;
        }
      }
    }
    return { ...picked, values };
  });
}

/** The payload's JSON text under the sealing key (and its run's id), or null when that is what it holds. */
async function resealed(codec: PayloadCodec, payload: StoredPayload): Promise<string | null> {
  const { column, runId, value } = payload;
  if (value === null) return null; // jsonb null: a receipt without a value or an error
  const opened = await codec.open(value);
  let sealed: unknown;
  if (column.kind === "value") {
    sealed = JSON.parse(await codec.sealJson(runId, JSON.stringify(opened)));
  } else if (column.kind === "error") {
    sealed = await sealError(codec, runId, opened);
  } else {
    sealed = await sealFields(codec, runId, opened, column.fields ?? []);
  }
  const json = JSON.stringify(sealed);
  return json === JSON.stringify(value) ? null : json;
}

async function sealFields(codec: PayloadCodec, runId: string, value: unknown, fields: readonly string[]) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const sealed: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const field of fields) {
    if (typeof sealed[field] === "string") sealed[field] = await codec.sealText(runId, sealed[field] as string);
  }
  return sealed;
}
