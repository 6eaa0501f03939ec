import { connect } from "@/lib/durable/drivers/connect";
import { runEditAndResumeContract } from "../contract/edit-and-resume-contract";
import { createTestDatabase } from "../helpers/databases";

runEditAndResumeContract("PostgreSQL (pg)", async () =>
  connect(await createTestDatabase("durable_edit_resume_pg"), { driver: "pg" }),
);
