import { connect } from "@/lib/durable/drivers/connect";
import { runEncryptionScanContract } from "../contract/encryption-scan-contract";

runEncryptionScanContract("PGlite", () => connect("memory://"));
