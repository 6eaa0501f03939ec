// The chaos scenarios' nemesis (docs/invariants.md): kills and freezes of worker processes.
import type { Worker } from "./workers";
import { ready } from "./scenario-support";

/**
 * One move of a nemesis: SIGKILL a worker (and start another) or freeze one past its lease; a
 * worker still starting is left alone (killed before its first tick, it would test nothing).
 */
export function nemesis(workers: Worker[], random: () => number, spawn: () => Worker): "kill" | "pause" | null {
  const candidates = workers.flatMap((worker, index) => (ready(worker) ? [index] : []));
  if (candidates.length === 0) return null;
  const index = candidates[Math.floor(random() * candidates.length)]!;
  const worker = workers[index]!;
  if (worker.paused || random() < 0.5) {
    worker.child.kill("SIGKILL");
    workers[index] = spawn();
    return "kill";
  }
  // Frozen past its lease (3 s budget + 0.3 s margin), then resumed: its writes must be refused.
  worker.child.kill("SIGSTOP");
  worker.paused = true;
  setTimeout(
    () => {
      worker.child.kill("SIGCONT");
      worker.paused = false;
    },
    3_500 + random() * 2_000,
  );
  return "pause";
}
