import { toBoundedMs, toInstant } from "../duration";
import type { StepHost } from "../engine/run/step-host";
import { InvalidInputError } from "../errors";
import { storableName } from "../names";
import type { Wait } from "../store";
import type { CallbackHandle, RaceBranch } from "../types";
import { never } from "./never";
import { traceWait } from "./wait-until";

/** A race's branches as the suspension writes them. */
type BranchRows = NonNullable<Wait["branches"]>;

/** The most branches one race may have. */
const MAX_BRANCHES = 100;

/**
 * `waitForAny` (docs/guide/composition.md, "Races"): one step row with every branch, written by
 * the suspension; the claim that wakes the run decides the winner by the database clock in one
 * conditional write (durable_race_winner, durable_answer_race). Answers `{ branch, value }`; a
 * callback branch's payload parsed by its schema, as `waitForCallback` answers it.
 */
export function createRaceStep(host: StepHost) {
  return async (id: string, branches: Record<string, RaceBranch>): Promise<any> => {
    const rows = branchRows(host, id, branches);
    const won = await race(host, id, rows, "any");
    const row = rows.find((r) => r.name === won.branch);
    const schema = row && "callback" in row ? host.callbacks.get(row.callback) : undefined;
    return schema && won.value !== null ? { ...won, value: schema.parse(won.value) } : won;
  };
}

/**
 * Parks the run on a race (or answers it from its receipt): `{ branch, value }` once decided.
 * `waitingFor` names the race, or the callback a `waitForCallback` waits for.
 */
export async function race(
  host: StepHost,
  id: string,
  rows: BranchRows,
  waitingFor: "any" | "callback",
): Promise<{ branch: string; value: unknown }> {
  const { seq, recorded, isReclaim } = host.reach(id, "any");
  if (recorded?.status === "completed") return (await host.answer(recorded)) as { branch: string; value: unknown };
  if (recorded?.status === "failed") throw host.revive(recorded.error);
  if (!host.acceptsWaits) return never();
  return traceWait(host, id, "any", isReclaim, async () => {
    const targets = rows.flatMap((row) => ("run" in row ? [row.run] : []));
    const wait: Wait = recorded
      ? { step_id: id }
      : { step_id: id, seq, kind: "any", branches: rows, ...(targets.length ? { target_runs: targets } : {}) };
    return host.stop({ kind: "suspend", waits: [wait], waitingFor: { kind: waitingFor, name: id } });
  });
}

/** Checks a race's branches and writes them as rows: a sleep as milliseconds from the suspension. */
function branchRows(host: StepHost, id: string, branches: Record<string, RaceBranch>): BranchRows {
  if (typeof branches !== "object" || branches === null || Array.isArray(branches)) {
    throw new InvalidInputError(`waitForAny "${id}": branches is an object of named branches`);
  }
  const entries = Object.entries(branches);
  if (entries.length === 0 || entries.length > MAX_BRANCHES) {
    throw new InvalidInputError(`waitForAny "${id}" takes 1 to ${MAX_BRANCHES} branches`);
  }
  return entries.map(([name, branch]) => branchRow(host, id, storableName(name, "a branch name"), branch));
}

function branchRow(host: StepHost, id: string, name: string, branch: RaceBranch): BranchRows[number] {
  const keys = typeof branch === "object" && branch !== null ? Object.keys(branch) : [];
  const what = `waitForAny "${id}" branch "${name}"`;
  if (keys.length !== 1) {
    throw new InvalidInputError(`${what} is one of { signal }, { sleep }, { until }, { run }, { callback }`);
  }
  if ("signal" in branch) return { name, signal: storableName(branch.signal, `${what}: a signal name`) };
  if ("sleep" in branch) return { name, wake_in_ms: Math.round(toBoundedMs(branch.sleep, `${what}: sleep`)) };
  // A date past the latest the toolkit stores is that latest: never (docs/rules.md, rule 19).
  if ("until" in branch) return { name, wake_at: toInstant(branch.until, `${what}: until`).toISOString() };
  if ("run" in branch) return { name, run: storableName(branch.run, `${what}: a run id`) };
  if ("callback" in branch) return { name, callback: ownCallbackId(host, branch.callback, what) };
  throw new InvalidInputError(`${what} is one of { signal }, { sleep }, { until }, { run }, { callback }`);
}

/**
 * The callback id of a handle this execution made (`ctx.step.callback` earlier in the body): a
 * handle of another run, or one made up, is refused, since its delivery would never wake this run.
 */
export function ownCallbackId(host: StepHost, handle: CallbackHandle<unknown>, what: string): string {
  const callbackId = typeof handle?.token === "string" ? handle.token.split(".")[0]! : "";
  if (!host.callbacks.has(callbackId)) {
    throw new InvalidInputError(`${what}: the callback is not one this run made with ctx.step.callback earlier`);
  }
  return callbackId;
}
