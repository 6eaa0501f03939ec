import type { Kysely } from "kysely";
import { describe } from "vitest";
import type { EncryptionKey } from "@/lib/durable";

export const TEST_KEYS = {
  k1: { id: "k1", secret: Buffer.alloc(32, 1).toString("base64") },
  k2: { id: "k2", secret: Buffer.alloc(32, 2).toString("base64") },
} satisfies Record<string, EncryptionKey>;

export function runEncryptionContract(label: string, _open: () => Promise<Kysely<any>>) {
  describe(`encryption at rest on ${label}`, () => {});
}
