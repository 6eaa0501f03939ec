import { connect } from "@/lib/durable/drivers/connect";
import { runEncryptionContract } from "../contract/encryption-contract";
import { createTestDatabase } from "../helpers/databases";

runEncryptionContract("PostgreSQL (pg)", async () => connect(await createTestDatabase("durable_encryption_pg"), { driver: "pg" }));
