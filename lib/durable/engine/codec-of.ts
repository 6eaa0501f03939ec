// The payload codec of a Durable, for the code that reads stored payloads with the app's own handle
// and no instance (the ai wing's chat and tool approvals: lib/durable/ai/). Kept under a symbol of
// this module, so it is no public name; a copy of the facade made by spreading it (testing.ts's
// createTestDurable) keeps it.
import { createPayloadCodec, type PayloadCodec } from "../encryption/payload-codec";

const CODEC = Symbol("durable-next.codec");
let plain: PayloadCodec | undefined;

/** Records `codec` on the facade createDurable built (engine/create-durable.ts). */
export function attachCodec<T extends object>(facade: T, codec: PayloadCodec): T {
  Object.assign(facade, { [CODEC]: codec });
  return facade;
}

/**
 * The codec of `durable`; the plain one for an object createDurable did not make (it opens
 * nothing: an envelope in what it reads is a DecryptionError naming the key).
 */
export function codecOf(durable: object): PayloadCodec {
  const codec = (durable as { [CODEC]?: PayloadCodec })[CODEC];
  if (codec) return codec;
  plain ??= createPayloadCodec();
  return plain;
}
