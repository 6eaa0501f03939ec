import { InvalidInputError } from "../errors";
import type { z } from "zod";
import { TOOL_APPROVAL_SIGNAL, toolApprovalSchema } from "../ai/tool-approval";
import type { AnyWorkflow, SignalSchemas } from "../types";

/**
 * A workflow that declares signals refuses other names and validates payloads (docs/rules.md,
 * rule 16); one that declares none, or one this deployment does not know, accepts any name as it is.
 * @throws InvalidInputError for an undeclared name or a payload its schema refuses
 */
export function validateSignal(workflow: AnyWorkflow | undefined, name: string, payload: unknown): unknown {
  // An agent's approvals (docs/guide/agents.md, "Approvals") are taken by every workflow, declared or not.
  if (name === TOOL_APPROVAL_SIGNAL && !Object.hasOwn(workflow?.signals ?? {}, name)) {
    return checked(toolApprovalSchema, name, payload);
  }
  const schemas = workflow?.signals as SignalSchemas | undefined;
  if (!schemas || Object.keys(schemas).length === 0) return payload;
  const schema = Object.hasOwn(schemas, name) ? schemas[name] : undefined;
  if (!schema) {
    const declared = Object.keys(schemas).join(", ");
    throw new InvalidInputError(`workflow "${workflow!.name}" takes no signal "${name}" (it takes ${declared})`);
  }
  return checked(schema, name, payload);
}

function checked(schema: z.ZodType, name: string, payload: unknown): unknown {
  const parsed = schema.safeParse(payload);
  if (!parsed.success) {
    throw new InvalidInputError(`the payload of signal "${name}" is invalid`, { issues: parsed.error.issues });
  }
  return parsed.data;
}
