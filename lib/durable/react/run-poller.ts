import type { RunStatus } from "../schemas";
import { type RunPollOptions, RunPollError, type RunPollState } from "./types";

/**
 * Polls a run's status route (`GET /api/durable/runs/{id}` with the run's status token) while the
 * run is not finished. Each poll also moves the run along: the route heals a dead run and advances
 * a due one after answering, so a page that watches a run needs no cron to see it progress.
 *
 * Polling starts 1 s apart and backs off (×2) to 5 s while nothing changes; any change goes back
 * to 1 s. A run that waits until a time (`wakeAt`: a sleep, a retry delay, a wait's deadline) is
 * polled just after that time rather than at the next backoff step, then again soon, backing off
 * from 250 ms (`delayFor`): the poll past the wake time makes the route advance the run, the next
 * one sees it move. It pauses while the tab is hidden, and stops for good once the run is completed, failed or
 * cancelled, or the route answers a 4xx (an unknown run and a wrong token are the same 404).
 */

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** The first poll after a wake time comes this long after it, so that it lands past it by the database clock. */
export const WAKE_SLACK_MS = 100;
/** After a poll that found the wake time passed (and so made the route advance the run), the backoff starts here. */
export const AFTER_WAKE_MS = 250;
export const isTerminal = (run: RunStatus | null | undefined) => !!run && TERMINAL.has(run.status);

/** What counts as "changed" for the backoff: status, the wait, and every step's state. */
const fingerprint = (run: RunStatus) =>
  [
    run.status,
    run.updatedAt,
    run.waitingFor?.kind,
    run.waitingFor?.name,
    ...run.steps.map((s) => `${s.id}:${s.status}:${s.attempt}`),
  ].join("|");

/** The polling loop, without React: the hook wraps it; tests drive it with a fake fetch and fake timers. */
export class RunPoller {
  state: RunPollState;
  private readonly minDelay: number;
  private readonly maxDelay: number;
  private delay: number;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private inFlight: AbortController | null = null;
  private paused = false;
  private stopped = true;
  private last: string | null;
  /** The wake time a poll already found passed: the backoff restarts once per wake time. */
  private passedWake: string | null = null;

  constructor(
    readonly id: string,
    private readonly options: RunPollOptions,
    private readonly onChange: (state: RunPollState) => void = () => {},
  ) {
    this.minDelay = options.minDelayMs ?? 1000;
    this.maxDelay = options.maxDelayMs ?? 5000;
    this.delay = this.minDelay;
    const initial = options.initial ?? null;
    this.state = { run: initial, error: null, isLoading: !initial };
    this.last = initial ? fingerprint(initial) : null;
  }

  /**
   * Starts polling: at once without an initial status, else after the first delay. Nothing to do
   * for a finished run.
   */
  start(): void {
    this.stopped = false;
    if (isTerminal(this.state.run)) return;
    this.schedule(this.state.run ? this.minDelay : 0);
  }

  /** Stops for good: no more requests, and an answer still in flight is dropped. */
  stop(): void {
    this.stopped = true;
    this.clearTimer();
    this.inFlight?.abort();
    this.inFlight = null;
  }

  /** Polls now and from the shortest delay, even after the run finished (e.g. after a retry). */
  refresh(): void {
    this.stopped = false;
    this.delay = this.minDelay;
    this.clearTimer();
    void this.poll();
  }

  /** Call on `visibilitychange`: polling paused by a hidden tab resumes at once when it shows. */
  visibilityChanged(): void {
    if (this.paused && !this.hidden()) {
      this.paused = false;
      this.delay = this.minDelay;
      void this.poll();
    }
  }

  private hidden(): boolean {
    if (this.options.isHidden) return this.options.isHidden();
    return typeof document !== "undefined" && document.visibilityState === "hidden";
  }

  private clearTimer() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(ms: number) {
    this.clearTimer();
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.poll();
    }, ms);
  }

  private update(patch: Partial<RunPollState>) {
    this.state = { ...this.state, ...patch };
    this.onChange(this.state);
  }

  private async poll(): Promise<void> {
    if (this.stopped) return;
    if (this.hidden()) {
      this.paused = true;
      return;
    }
    this.inFlight?.abort();
    const controller = new AbortController();
    this.inFlight = controller;
    const endpoint = this.options.endpoint ?? "/api/durable/runs";
    const doFetch = this.options.fetch ?? globalThis.fetch;
    let next: number;
    try {
      const response = await doFetch(`${endpoint}/${encodeURIComponent(this.id)}`, {
        headers: { authorization: `Bearer ${this.options.token}` },
        cache: "no-store",
        signal: controller.signal,
      });
      const body = await response.json().catch(() => null);
      if (controller.signal.aborted) return;
      if (!response.ok) {
        const error = new RunPollError(
          response.status,
          body?.error?.code ?? "http_error",
          body?.error?.message ?? `status route answered ${response.status}`,
        );
        this.update({ error, isLoading: false });
        // A 4xx will not fix itself (unknown run, wrong token); a 5xx or 429 may.
        if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429)
          return this.stop();
        next = this.backOff();
      } else {
        const run = body as RunStatus;
        const print = fingerprint(run);
        if (print !== this.last) this.delay = this.minDelay;
        next = this.delayFor(run, print === this.last ? this.backOff() : this.delay);
        this.last = print;
        this.update({ run, error: null, isLoading: false });
        if (isTerminal(run)) return this.stop();
      }
    } catch (e) {
      if (controller.signal.aborted) return;
      this.update({
        error: new RunPollError(0, "network_error", (e as Error)?.message ?? String(e)),
        isLoading: false,
      });
      next = this.backOff();
    } finally {
      if (this.inFlight === controller) this.inFlight = null;
    }
    this.schedule(next);
  }

  /**
   * The backoff's `delay`, shortened for a run that wakes at a known time: to just after `wakeAt`
   * when that comes sooner. The first poll that finds the time passed (the route advances the run
   * after that answer) restarts the backoff at `AFTER_WAKE_MS`, so the move is seen at once, and a
   * run held past its time (a concurrency limit) is polled less and less often. The wake time is
   * the database's and `Date.now()` the browser's: a clock that is off moves the poll by as much,
   * and the backoff bounds it.
   */
  private delayFor(run: RunStatus, delay: number): number {
    if (!run.wakeAt || isTerminal(run)) return delay;
    const untilWake = Date.parse(run.wakeAt) - Date.now();
    if (Number.isNaN(untilWake)) return delay;
    if (untilWake >= 0) return Math.min(delay, untilWake + WAKE_SLACK_MS);
    if (this.passedWake === run.wakeAt) return delay;
    this.passedWake = run.wakeAt;
    this.delay = Math.min(delay, AFTER_WAKE_MS);
    return this.delay;
  }

  /** Nothing changed (or the poll failed): double the delay, up to the cap. */
  private backOff(): number {
    this.delay = Math.min(this.maxDelay, this.delay * 2);
    return this.delay;
  }
}
