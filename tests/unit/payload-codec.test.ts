import { randomBytes } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { ENVELOPE_PREFIX } from "../../lib/durable/encryption/envelope";
import { parseEncryptionKeys } from "../../lib/durable/encryption/keys";
import { createPayloadCodec, holdsEnvelope } from "../../lib/durable/encryption/payload-codec";
import { DecryptionError, InvalidInputError } from "../../lib/durable/errors";

const secret = (byte: number) => btoa(String.fromCharCode(...new Uint8Array(32).fill(byte)));
const k1 = { id: "k1", secret: secret(1) };
const k2 = { id: "k2", secret: secret(2) };

describe("payload codec", () => {
  it("seals a value of a run into an envelope that holds none of its text, and opens it", async () => {
    const codec = createPayloadCodec({ keys: [k1] });
    const stored = await codec.sealJson("run-1", JSON.stringify({ card: "4242 4242", n: 1 }));
    expect(stored).not.toContain("4242");
    const envelope = JSON.parse(stored) as string;
    expect(envelope.startsWith(`${ENVELOPE_PREFIX}k1.`)).toBe(true);
    expect(await codec.open(envelope)).toEqual({ card: "4242 4242", n: 1 });
  });

  it("seals equal values of one run alike and of two runs differently", async () => {
    const codec = createPayloadCodec({ keys: [k1] });
    const json = JSON.stringify({ a: 1 });
    expect(await codec.sealJson("r1", json)).toBe(await codec.sealJson("r1", json));
    expect(await codec.sealJson("r1", json)).not.toBe(await codec.sealJson("r2", json));
    expect(await codec.sealJson("r1", json)).not.toBe(await codec.sealJson("r1", JSON.stringify({ a: 2 })));
  });

  it("deflates a compressible value before sealing and keeps a small one raw", async () => {
    const codec = createPayloadCodec({ keys: [k1] });
    const big = JSON.stringify("x".repeat(64 * 1024));
    const sealed = await codec.sealJson("r", big);
    expect(sealed.length).toBeLessThan(2000);
    expect(await codec.open(JSON.parse(sealed))).toBe("x".repeat(64 * 1024));
    const random = JSON.stringify(Array.from({ length: 300 }, (_, i) => (i * 7919) % 97).join(""));
    expect(await codec.open(JSON.parse(await codec.sealJson("r", random)))).toBe(JSON.parse(random));
  });

  it("opens envelopes wherever a stored value holds them: nested, and inside a formatted message", async () => {
    const codec = createPayloadCodec({ keys: [k1] });
    const child = JSON.parse(await codec.sealJson("child", JSON.stringify({ total: 3 })));
    const message = await codec.sealText("child", "card declined");
    const composed = { branch: "a", value: child, error: { message: `child run "c" failed: ${message}` } };
    expect(holdsEnvelope(composed)).toBe(true);
    expect(await codec.open(composed)).toEqual({
      branch: "a",
      value: { total: 3 },
      error: { message: 'child run "c" failed: card declined' },
    });
  });

  it("rotates: the first key seals, every listed key opens, a decrypt-only key never seals", async () => {
    const old = createPayloadCodec({ keys: [k1] });
    const sealedOld = JSON.parse(await old.sealJson("r", "1"));
    const rotated = createPayloadCodec({ keys: [{ ...k1, decryptOnly: true }, k2] });
    expect(JSON.parse(await rotated.sealJson("r", "1"))).toMatch(/^\$denc1\.k2\./);
    expect(await rotated.open(sealedOld)).toBe(1);
    const retired = createPayloadCodec({ keys: [{ ...k1, decryptOnly: true }] });
    expect(retired.seals).toBe(false);
    expect(await retired.sealJson("r", "[1]")).toBe("[1]");
    expect(await retired.open(sealedOld)).toBe(1);
  });

  it("names the key id when no configured key opens an envelope", async () => {
    const sealed = JSON.parse(await createPayloadCodec({ keys: [k1] }).sealJson("r", "1"));
    const missing = await createPayloadCodec()
      .open(sealed)
      .catch((e: unknown) => e);
    expect(DecryptionError.is(missing)).toBe(true);
    expect(missing).toMatchObject({ keyId: "k1", reason: "missing_key", code: "decryption_failed" });
    expect((missing as Error).message).toContain('"k1"');
    const wrong = await createPayloadCodec({ keys: [{ id: "k1", secret: secret(9) }] })
      .open(sealed)
      .catch((e: unknown) => e);
    expect(wrong).toMatchObject({ keyId: "k1", reason: "unreadable" });
    const altered = `${sealed.slice(0, -2)}${sealed.endsWith("A") ? "B" : "A"}${sealed.slice(-1)}`;
    await expect(createPayloadCodec({ keys: [k1] }).open(altered)).rejects.toMatchObject({ reason: "unreadable" });
  });

  it("stores plain values as they are, refuses one holding the envelope prefix, defuses it in text", async () => {
    const plain = createPayloadCodec();
    expect(plain.seals).toBe(false);
    expect(await plain.sealJson("r", '{"a":1}')).toBe('{"a":1}');
    await expect(plain.sealJson("r", JSON.stringify(`${ENVELOPE_PREFIX}x`))).rejects.toThrow(InvalidInputError);
    const text = await plain.sealText("r", `boom ${ENVELOPE_PREFIX}x`);
    expect(text).not.toContain(ENVELOPE_PREFIX);
    const value = { a: [1, "b"] };
    expect(await plain.open(value)).toBe(value);
  });

  it("parses DURABLE_ENCRYPTION_KEYS and refuses malformed keys naming the id, never the secret", () => {
    expect(parseEncryptionKeys(` k2:${k2.secret} , k1!:${k1.secret}`)).toEqual([
      { id: "k2", secret: k2.secret },
      { id: "k1", secret: k1.secret, decryptOnly: true },
    ]);
    expect(() => createPayloadCodec({ keys: [] })).toThrow(/at least one key/);
    expect(() => createPayloadCodec({ keys: [{ id: "a.b", secret: k1.secret }] })).toThrow(/id must match/);
    expect(() => createPayloadCodec({ keys: [k1, k1] })).toThrow(/listed twice/);
    const short = btoa("short");
    expect(() => createPayloadCodec({ keys: [{ id: "k", secret: short }] })).toThrow(
      /"k": the secret must be 32 bytes/,
    );
    expect(() => createPayloadCodec({ keys: [{ id: "k", secret: short }] })).not.toThrow(short);
  });

  it("deflates with Node's zlib where it has it, with CompressionStream elsewhere, to the same envelopes", async () => {
    // The codec module as the Edge runtime loads it: no process.getBuiltinModule, so the streams.
    vi.resetModules();
    vi.stubGlobal("process", { ...process, getBuiltinModule: undefined });
    const streams = await import("../../lib/durable/encryption/payload-codec");
    vi.unstubAllGlobals();
    const edge = streams.createPayloadCodec({ keys: [k1] });
    const node = createPayloadCodec({ keys: [k1] });
    const values = [
      JSON.stringify({ items: Array.from({ length: 40 }, (_, i) => ({ id: `ord_${i}`, customer: "Ada Lovelace" })) }),
      JSON.stringify("x".repeat(64 * 1024)),
      JSON.stringify(randomBytes(3000).toString("base64")),
      // Over the probe's 16 KiB: base64 of random bytes deflates by a quarter, so it is deflated;
      // random characters of the whole BMP do not, so the probe keeps them as they are.
      JSON.stringify(randomBytes(30_000).toString("base64")),
      JSON.stringify(String.fromCharCode(...Array.from(randomBytes(40_000), (b, i) => 0x4e00 + b * 64 + (i % 64)))),
    ];
    for (const json of values) {
      // Equal bytes deflated alike: a value sealed on either runtime is the same envelope (the SQL
      // that compares a child's stored input with its replayed start depends on it).
      const sealed = await node.sealJson("r", json);
      expect(await edge.sealJson("r", json)).toBe(sealed);
      expect(await edge.open(JSON.parse(sealed))).toEqual(JSON.parse(json));
      expect(await node.open(JSON.parse(sealed))).toEqual(JSON.parse(json));
    }
  });
});
