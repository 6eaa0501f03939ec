import { connect } from "@/lib/durable/drivers/connect";
import { runEncryptionScanContract } from "../contract/encryption-scan-contract";
import { createTestDatabase } from "../helpers/databases";

runEncryptionScanContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_encryption_scan_pg"), { driver: "pg" }),
);
