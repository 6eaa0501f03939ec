import { startTimer } from "../duration";

/** Waits `ms` in this process, or less when `signal` aborts (a cancel, a lost claim). Never rejects. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = startTimer(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        timer.clear();
        resolve();
      },
      { once: true },
    );
  });
}
