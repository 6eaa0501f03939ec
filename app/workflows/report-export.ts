import * as z from "zod";
import { defineWorkflow } from "@/lib/durable";
import { getOperation, submitOperation } from "../mock-providers/operations";
import { toStepError } from "./provider-errors";

/**
 * An external long-running operation: submit it once (the external key is the idempotency key,
 * so a submit whose response was lost does not start a second export), then `waitFor` polls it
 * until it is done. However many polls it takes, the step leaves one receipt: the final status.
 * A poll that fails is backed off and retried; it never fails the run.
 */
export const reportExport = defineWorkflow({
  name: "report-export",
  input: z.object({ report: z.string().min(1).max(100).default("Q3 revenue by region") }),
  async run(ctx, input) {
    const { operationId } = await ctx.step.run(
      "submit-export",
      (s) =>
        submitOperation({ runId: ctx.runId, kind: `export: ${input.report}`, idempotencyKey: s.externalKey }).catch(
          toStepError,
        ),
      { retries: 3, retryDelay: "1s" },
    );
    const finished = await ctx.step.waitFor("export-finished", {
      poll: () => getOperation(operationId),
      ready: (operation) => operation.state === "succeeded",
      every: "2s",
      timeout: "30m",
      pollBackoff: { factor: 1.25, maxDelay: "10s" },
    });
    return {
      report: input.report,
      operationId,
      url: finished.result?.url ?? null,
      rows: finished.result?.rows ?? null,
    };
  },
});
