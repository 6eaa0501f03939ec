// `ctx.patched(id)` and `ctx.deprecatePatch(id)` (docs/guide/versions.md,
// "Patching"): a journaled boolean at the body's position, so a deploy can change a workflow's steps
// under runs in flight without a new version.
import { InvalidInputError } from "../../errors";
import { isStorableName, MAX_NAME_LENGTH } from "../../names";
import { never } from "../../steps/never";
import type { Execution } from "./execution";
import type { StepRecorder } from "./step-recorder";

/** A patch's marker is a receipt of kind "patch" with this step id prefix: its own namespace. */
export const PATCH_MARKER_PREFIX = "patch:";

/** The longest patch id: its marker's step id is a storable name. */
export const MAX_PATCH_ID_LENGTH = MAX_NAME_LENGTH - PATCH_MARKER_PREFIX.length;

/**
 * The step id of patch `id`'s marker (`patch:<id>`).
 * @throws InvalidInputError naming `what` when `id` is not a non-empty string of at most 249
 * characters without NUL or a lone surrogate
 */
export function patchMarkerId(id: unknown, what: string): string {
  if (typeof id === "string" && id.length <= MAX_PATCH_ID_LENGTH && isStorableName(id)) {
    return PATCH_MARKER_PREFIX + id;
  }
  const shown = typeof id === "string" ? JSON.stringify(id.length > 40 ? `${id.slice(0, 40)}…` : id) : typeof id;
  throw new InvalidInputError(
    `${what}: patch id ${shown} is not a non-empty string of at most ${MAX_PATCH_ID_LENGTH} characters, ` +
      "without NUL or a lone surrogate",
  );
}

/** What `ctx` gets: the two calls, over one execution. */
export interface PatchCalls {
  patched(id: string): Promise<boolean>;
  deprecatePatch(id: string): Promise<void>;
}

/**
 * The patch calls of one execution. Each answer is kept by marker, so a second call with the same
 * id in one pass answers as the first did and takes no position; a replay decides the same way
 * from the ledger.
 */
export function createPatchCalls(exec: Execution, recorder: StepRecorder): PatchCalls {
  const answers = new Map<string, Promise<boolean>>();
  const markerOf = (id: unknown, call: string): string => {
    try {
      return patchMarkerId(id, `ctx.${call}`);
    } catch (error) {
      // As a bad step id does (Execution.reach): the run fails at once, whatever the body catches.
      exec.requestStop({ kind: "fail", error });
      throw error;
    }
  };
  // As every step does (steps/step-api.ts, afterFlush): a held-back receipt is written first, so
  // the marker's position stays behind it.
  const once = (marker: string, decide: () => Promise<boolean>): Promise<boolean> => {
    const known = answers.get(marker);
    if (known) return known;
    const flushing = recorder.holding ? recorder.flush() : null;
    const answer = flushing ? flushing.then((ok) => (ok ? decide() : never<boolean>())) : decide();
    answers.set(marker, answer);
    return answer;
  };
  return {
    patched(id) {
      const marker = markerOf(id, "patched");
      return once(marker, () => decidePatched(exec, recorder, marker));
    },
    deprecatePatch(id) {
      const marker = markerOf(id, "deprecatePatch");
      return once(marker, async () => {
        // A run that holds the marker consumes it: its later steps keep their positions.
        if (exec.inLedger(marker)) exec.reach(marker, "patch");
        else if (exec.hasReceiptsFrom(exec.position)) {
          // The run took the old path, which this code no longer has: say so, and go on.
          exec.settings.log(
            `[${exec.runId}] ${marker} is deprecated, but the run went on past it without its marker ` +
              "(it took the old path): its replay may diverge",
          );
        }
        return true;
      }).then(() => undefined);
    },
  };
}

/**
 * Whether the run takes the patched path at this position: the marker answers true; a receipt at
 * or beyond the position without it means older code went on past here (false); else the run is
 * on new ground, and the marker is written under the fence before true is answered, so a stale
 * owner never answers true without it (its write is refused and its body goes no further).
 */
async function decidePatched(exec: Execution, recorder: StepRecorder, marker: string): Promise<boolean> {
  if (exec.inLedger(marker)) {
    exec.reach(marker, "patch");
    return true;
  }
  if (exec.hasReceiptsFrom(exec.position)) return false;
  if (exec.isStopping) return never();
  const { seq } = exec.reach(marker, "patch");
  const outcome = { stepId: marker, seq, kind: "patch", status: "completed", attempt: 1, resultJson: "true" } as const;
  // Null: refused (a lost fence, a cancel) or not written (past the deadline, a database error):
  // the execution stops, and the next owner decides again from the ledger it claims.
  const written = await exec.track(() => recorder.write(outcome));
  if (!written) return never();
  // A conflict found the marker already recorded: true all the same.
  return true;
}
