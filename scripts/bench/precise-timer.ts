// A wake-up timer finer than Node's (whose timers have a 1 ms grain and fire 1 to 2 ms late), for
// the delaying proxy (scripts/bench/delay-proxy.ts): a worker thread sleeps in Atomics.wait, which
// takes a fractional timeout, until the deadline set in shared memory, then posts a message, which
// wakes this thread's event loop at once. Nothing spins: between deadlines both threads sleep.
import { Worker } from "node:worker_threads";

// The worker's loop: ctl[0] counts changes of the deadline (to wake its wait early), deadline[0]
// is the wake time in µs since the epoch (0: none). It clears a deadline only if unchanged since read.
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const ctl = new Int32Array(workerData.ctl);
const deadline = new BigInt64Array(workerData.deadline);
const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;
for (;;) {
  const generation = Atomics.load(ctl, 0);
  const due = Atomics.load(deadline, 0);
  if (due === 0n) { Atomics.wait(ctl, 0, generation); continue; }
  const waitMs = (Number(due) - nowUs()) / 1000;
  if (waitMs > 0.01) { Atomics.wait(ctl, 0, generation, waitMs); continue; }
  if (Atomics.compareExchange(deadline, 0, due, 0n) === due) parentPort.postMessage(0);
}`;

/** Absolute time in ms (epoch based), comparable across threads. */
export const nowMs = () => performance.timeOrigin + performance.now();

export interface PreciseTimer {
  /** Calls the timer's callback at `atMs` (nowMs() clock), replacing any earlier request. */
  wakeAt(atMs: number): void;
  close(): Promise<void>;
}

/** One timer; `onWake` runs on this thread when a requested deadline has passed. */
export function preciseTimer(onWake: () => void): PreciseTimer {
  const ctlBuffer = new SharedArrayBuffer(4);
  const deadlineBuffer = new SharedArrayBuffer(8);
  const ctl = new Int32Array(ctlBuffer);
  const deadline = new BigInt64Array(deadlineBuffer);
  const worker = new Worker(WORKER, { eval: true, workerData: { ctl: ctlBuffer, deadline: deadlineBuffer } });
  worker.on("message", onWake);
  return {
    wakeAt(atMs) {
      Atomics.store(deadline, 0, BigInt(Math.max(1, Math.round(atMs * 1000))));
      Atomics.add(ctl, 0, 1);
      Atomics.notify(ctl, 0);
    },
    async close() {
      await worker.terminate();
    },
  };
}
