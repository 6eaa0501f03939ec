// `signal()`: a delivery into a run's mailbox, validated against the schemas of the version the
// run started with (docs/model.md; the next wait on the name takes it, in order).
import { InvalidInputError, RunNotFoundError, RunStateConflictError } from "../errors";
import { toJsonText } from "../json";
import { isStorableName, storableName } from "../names";
import { deliverSignal, findRunWorkflow } from "../store";
import type { AnyWorkflow } from "../types";
import { approvalRuleOf } from "./approval-rules";
import { versionKey } from "./define-workflow";
import type { SignalInput, SignalResult, TypedSignalInput } from "./durable-api";
import { assertOpen, type DurableInstance } from "./instance";
import { expectWorkflow } from "./reads";
import { validateSignal } from "./validate-signal";

/** Delivers `signal`; a delivery id seen before for the run is answered as a repeat and stores nothing. */
export async function sendSignal(
  instance: DurableInstance,
  signal: SignalInput | TypedSignalInput<AnyWorkflow, string>,
): Promise<SignalResult> {
  const { runId, name, payload = null, id: deliveryId, workflow: named } = signal;
  assertOpen(instance);
  storableName(name, "a signal name");
  if (deliveryId !== undefined) storableName(deliveryId, "a delivery id");
  if (!isStorableName(runId)) throw new RunNotFoundError(String(runId));
  const found = await findRunWorkflow(instance.db, runId);
  if (found === null) throw new RunNotFoundError(runId);
  if (named) expectWorkflow(runId, found.workflow, named);
  // The version the run started with declares its signals.
  const definition = instance.registry.byVersion.get(versionKey(found.workflow, found.version));
  // An approval's wait is completed by the decisions of people, never by a plain delivery
  // (docs/guide/approvals.md): decide() checks the approvers and the quorum.
  if (approvalRuleOf(definition, name)) {
    throw new InvalidInputError(
      `signal "${name}" of workflow "${found.workflow}" is an approval: decide it with decide()`,
    );
  }
  const plainJson = toJsonText(validateSignal(definition, name, payload), {
    limit: instance.settings.maxResultBytes,
  });
  // The mailbox row belongs to the run: sealed under its id (engine/payloads.ts).
  const payloadJson = await instance.codec.sealJson(runId, plainJson);
  const outcome = await deliverSignal(instance.db, { runId, name, payloadJson, deliveryId: deliveryId ?? null });
  switch (outcome) {
    case "not_found":
      throw new RunNotFoundError(runId);
    case "terminal":
      throw new RunStateConflictError(`run "${runId}" is finished; it takes no more signals`);
    case "repeat":
      return { ok: true, signalled: false, alreadyDelivered: true };
    default:
      return { ok: true, signalled: true, alreadyDelivered: false };
  }
}
