import { connect } from "@/lib/durable/drivers/connect";
import { runToolApprovalsInboxContract } from "../contract/tool-approvals-inbox-contract";

// PGlite is one connection: the racing deciders share it, and their decisions queue on it.
runToolApprovalsInboxContract("PGlite", async () => {
  const db = await connect("memory://");
  return { db, another: async () => db };
});
