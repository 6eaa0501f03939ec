import { connect } from "@/lib/durable/drivers/connect";
import { runCompositionContract } from "../contract/composition-contract";
import { runEncryptionContract, TEST_KEYS } from "../contract/encryption-contract";

runEncryptionContract("PGlite", () => connect("memory://"));
// The composition suite again with every payload sealed: the read paths open what SQL copied.
runCompositionContract("PGlite, encrypted", () => connect("memory://"), { encryption: { keys: [TEST_KEYS.k1] } });
