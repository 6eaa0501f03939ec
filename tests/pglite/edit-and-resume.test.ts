import { connect } from "@/lib/durable/drivers/connect";
import { runEditAndResumeContract } from "../contract/edit-and-resume-contract";

runEditAndResumeContract("PGlite", () => connect("memory://"));
