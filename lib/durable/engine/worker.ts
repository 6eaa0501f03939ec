import { listenOf, type StopListening } from "../drivers/listen";
import { MAX_TIMER_MS } from "../duration";
import { InvalidInputError } from "../errors";
import { type ClaimedRun, type ClaimRequest, type DurableDb, msUntilNextWake } from "../store";
import type { ClaimChain } from "./run/advance";
import { checkRange } from "./check-range";
import { type Advanced, countAdvanced, runLoops } from "./loops";

export interface WorkOptions {
  /** How many runs the worker advances at once (1–1000, default 8). */
  concurrency?: number;
  /** Abort to stop: nothing more is claimed, each held run is given back at its next step. */
  signal?: AbortSignal;
  /**
   * How often an idle worker looks for due runs when it cannot LISTEN (PGlite in another
   * process, a handle not made by connect()), or while runs are due but held back by a
   * concurrency limit (ms, default 1000).
   */
  pollMs?: number;
  /**
   * How often the worker does a tick's housekeeping (due schedule slots, unknownVersion "fail", a
   * retention slice) whether or not it is idle (ms, 100–10000, default 5000): a steady backlog
   * must not hold a schedule slot back or stop retention.
   */
  housekeepingMs?: number;
}

export interface WorkReport {
  claimed: number;
  completed: number;
  waiting: number;
  failed: number;
  yielded: number;
  healed: number;
  scheduled: number;
  /** Whether the worker was woken by LISTEN/NOTIFY (false: it polled). */
  listening: boolean;
}

export interface WorkerDeps {
  db: DurableDb;
  workflows: readonly string[];
  /** The budget of one claim: a run held this long is given back and claimed again (ms). */
  budgetMs: number;
  /** What a lease adds to the budget (docs/rules.md, rule 11a; ms). */
  marginMs: number;
  log: (message: string) => void;
  /**
   * Claims one due run and advances it; `onClaimed` runs as soon as the claim succeeded.
   * `carried`: a run already claimed for this loop by the last completion (advanced without a
   * claim); `chain`: this run's completion may claim the loop's next run.
   */
  claimAndAdvance(
    deadline: number,
    budgetMs: number,
    release: AbortSignal,
    onClaimed: () => void,
    carried: ClaimedRun | null,
    chain: ClaimChain,
  ): Promise<Advanced | null>;
  /** The claim a completion chains for the loop, with this lease (ms). */
  nextClaim(leaseMs: number): ClaimRequest;
  /** Claims up to `count` due runs in one statement, each with this lease (ms; docs/decisions.md, "Batched claims"). */
  claimRuns(count: number, leaseMs: number): Promise<ClaimedRun[]>;
  /**
   * What a tick does besides claiming: start due schedule slots, fail runs of unknown versions
   * (unknownVersion "fail"), a retention slice. Answers the runs it started for schedule slots.
   */
  housekeeping(): Promise<number>;
}

/** The channel the `durable_runs` trigger notifies when a run becomes due (migration 0004). */
export const DUE_CHANNEL = "durable_due";
/** An idle worker that listens still looks this often: a notification lost with a connection is not waited for long. */
const LISTENING_POLL_MS = 10_000;
/** How often a worker does its housekeeping, busy or not, unless `housekeepingMs` says otherwise. */
const HOUSEKEEPING_MS = 5_000;

/**
 * Worker mode (docs/decisions.md, "Worker mode wakes on NOTIFY, not on a poll"): `concurrency`
 * loops claim and advance due runs until none is due, then sleep until a run becomes due: a
 * notification, the next wake time, or the poll interval, whichever comes first. A tick's
 * housekeeping (schedules, unknown versions, retention) runs on a timer, busy or not, and when a
 * loop goes idle. Errors of the database are logged and waited out; the worker stops only when
 * `signal` aborts, after every held run was given back or recorded.
 */
export async function runWorker(deps: WorkerDeps, options: WorkOptions): Promise<WorkReport> {
  const concurrency = checkRange("concurrency", options.concurrency ?? 8, 1, 1000, "whole number");
  const pollMs = options.pollMs ?? 1000;
  if (!Number.isFinite(pollMs) || pollMs < 10) throw new InvalidInputError("pollMs is a number of ms >= 10");
  const housekeepingMs = options.housekeepingMs ?? HOUSEKEEPING_MS;
  if (!Number.isFinite(housekeepingMs) || housekeepingMs < 100 || housekeepingMs > 10_000) {
    throw new InvalidInputError("housekeepingMs is a number of ms from 100 to 10000");
  }
  const signal = options.signal ?? new AbortController().signal;
  const report: WorkReport = { ...emptyWorkReport(), listening: false };
  const waker = new Waker(deps, pollMs, signal, report, housekeepingMs);
  await waker.listen();
  report.listening = waker.listening;
  // Housekeeping comes due on this timer, and between runs (see Waker.betweenRuns).
  const timer = setInterval(() => void waker.housekeeping(), housekeepingMs);
  try {
    await runLoops(concurrency, async () => {
      // A run claimed for this loop (by a batch, or by the last completion) and the deadline its lease covers.
      let carried: Carried | null = null;
      // A stopping worker still advances a run it holds: it is given back at its first step.
      while (carried || !signal.aborted) {
        const seen = waker.generation;
        try {
          carried ??= await claimForFreeLoops(deps, waker);
          if (!carried) {
            await waker.housekeeping();
            carried = await waker.idle(seen);
            continue;
          }
          let nextDeadline = 0;
          const chain: ClaimChain = {
            request: () => {
              if (signal.aborted) return null;
              nextDeadline = performance.now() + deps.budgetMs;
              return deps.nextClaim(deps.budgetMs + deps.marginMs);
            },
          };
          // A loop whose completion claimed a run wakes an idle one, which claims for every idle loop:
          // runs may have come due by time. A batch already claimed for every idle loop.
          const held = carried;
          carried = null;
          const onClaimed = () => (held.chained ? waker.wakeOne() : undefined);
          const advanced = await deps.claimAndAdvance(
            held.deadline,
            deps.budgetMs,
            signal,
            onClaimed,
            held.claim,
            chain,
          );
          if (advanced) {
            countAdvanced(report, advanced);
            // It may have parked with a wake time earlier than the one the idle loops wait for (a run
            // made due now, by an end or a release, is notified).
            if (advanced.outcome === "waiting") waker.retime();
            if (chain.claimed) carried = { claim: chain.claimed, deadline: nextDeadline, chained: true };
            // The completion's claim found nothing due: the loop goes idle as after an empty claim.
            if (chain.claimed !== null) {
              await waker.betweenRuns();
              continue;
            }
          }
          await waker.housekeeping();
          carried = await waker.idle(seen);
        } catch (error) {
          deps.log(`worker: ${(error as Error)?.message ?? error}; trying again in ${pollMs} ms`);
          await waker.pause(pollMs);
        }
      }
    });
  } finally {
    clearInterval(timer);
    await waker.close();
  }
  return report;
}

/** A run claimed for a loop, the deadline its lease covers, and whether a completion chained its claim. */
interface Carried {
  claim: ClaimedRun;
  deadline: number;
  chained: boolean;
}

/**
 * Claims for this loop and every idle one in one statement (docs/decisions.md, "Batched claims").
 * The idle loops are taken off the sleepers first, so no other loop claims for them too, and each
 * run claimed is handed at once to one of them: a run never waits in memory while its lease runs
 * down. Answers this loop's run, or null when nothing claimable was due.
 */
async function claimForFreeLoops(deps: WorkerDeps, waker: Waker): Promise<Carried | null> {
  const since = waker.generation;
  const idle = waker.takeSleepers();
  // The lease covers the deadline plus the margin (docs/rules.md, rule 11a): it is taken after this.
  const deadline = performance.now() + deps.budgetMs;
  let claims: ClaimedRun[] = [];
  try {
    claims = await deps.claimRuns(1 + idle.length, deps.budgetMs + deps.marginMs);
  } finally {
    const handed = claims.slice(1).map((claim) => ({ claim, deadline, chained: false }));
    waker.handOut(idle, handed, since);
  }
  return claims[0] ? { claim: claims[0], deadline, chained: false } : null;
}

function emptyWorkReport(): Omit<WorkReport, "listening"> {
  return { claimed: 0, completed: 0, waiting: 0, failed: 0, yielded: 0, healed: 0, scheduled: 0 };
}

/** An idle loop's wake-up: with the run a batch claimed for it, or null (claim). */
type Sleeper = (handed: Carried | null) => void;

/**
 * Wakes idle loops, one at a time: on a notification, at the next wake time, or at the poll
 * interval; all of them on stop. One idle loop at a time keeps the timer, after reading how long
 * until the next run wakes.
 */
class Waker {
  /** Counts wake-ups (a notification, the timer, a stop): a loop that missed one while it worked does not sleep. */
  generation = 0;
  /** Counts moves of the next wake time: the timer reads it again. */
  private epoch = 0;
  private stopListening: StopListening | null = null;
  private relistenAt = 0;
  private readonly sleepers: Sleeper[] = [];
  private timing = false;
  private changed: (() => void) | null = null;
  private lastHousekeeping = 0;
  /** The housekeeping in flight: one at a time, whether the timer or an idle loop asked. */
  private housekeepingRun: Promise<void> | null = null;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly pollMs: number,
    private readonly signal: AbortSignal,
    private readonly report: WorkReport,
    private readonly housekeepingMs: number,
  ) {
    signal.addEventListener("abort", () => this.wakeAll(), { once: true });
  }

  get listening(): boolean {
    return this.stopListening !== null;
  }

  /** Starts listening when the driver can; a failure only means polling until the next try. */
  async listen(): Promise<void> {
    const listen = listenOf(this.deps.db);
    if (!listen || this.stopListening || this.signal.aborted) return;
    try {
      this.stopListening = await listen(
        DUE_CHANNEL,
        () => this.wakeOne(),
        (error) => {
          this.deps.log(`worker: the listening connection dropped (${error.message}); polling until it is back`);
          this.stopListening = null;
          this.relistenAt = Date.now() + this.pollMs;
        },
      );
    } catch (error) {
      this.deps.log(`worker: LISTEN failed (${(error as Error)?.message ?? error}); polling every ${this.pollMs} ms`);
      this.relistenAt = Date.now() + 5 * this.pollMs;
    }
  }

  /**
   * The tick's housekeeping, one at a time and at most once a second, whoever asks (the timer or
   * a loop going idle); the slots it started count in the report. A failure is logged: the next
   * time tries again.
   */
  housekeeping(): Promise<void> {
    if (this.housekeepingRun || this.signal.aborted || Date.now() - this.lastHousekeeping < 1000) {
      return this.housekeepingRun ?? Promise.resolve();
    }
    this.lastHousekeeping = Date.now();
    const run = this.deps
      .housekeeping()
      .then((started) => {
        this.report.scheduled += started;
      })
      .catch((error) => this.deps.log(`worker: housekeeping failed (${(error as Error)?.message ?? error})`))
      .finally(() => {
        this.housekeepingRun = null;
      });
    this.housekeepingRun = run;
    return run;
  }

  /**
   * Between two runs of a busy loop: does the housekeeping when it is due and nobody is doing it,
   * then yields to the event loop. On PGlite a query resolves without a turn of the event loop, so
   * a loop that always has a run would otherwise starve every timer of the process (the
   * housekeeping timer among them) for as long as the backlog lasts.
   */
  async betweenRuns(): Promise<void> {
    if (!this.housekeepingRun && Date.now() - this.lastHousekeeping >= this.housekeepingMs) await this.housekeeping();
    await new Promise((resolve) => setImmediate(resolve));
  }

  /**
   * Sleeps until woken, unless a wake-up came since generation `seen`. Answers the run a batch
   * claimed for this loop, or null: woken to claim.
   */
  idle(seen: number): Promise<Carried | null> {
    if (this.generation !== seen || this.signal.aborted) return Promise.resolve(null);
    const asleep = new Promise<Carried | null>((resolve) => this.sleepers.push(resolve));
    if (!this.timing) void this.keepTime();
    return asleep;
  }

  /** Wakes one idle loop; with none asleep, the next loop about to sleep does not. */
  wakeOne(): void {
    this.generation++;
    this.retime();
    this.sleepers.shift()?.(null);
  }

  /** Takes every idle loop off the sleepers: a batch claims for them (see claimForFreeLoops). */
  takeSleepers(): Sleeper[] {
    return this.sleepers.splice(0);
  }

  /**
   * Hands each run a batch claimed to one of the loops it was claimed for; the others go back to
   * sleep, and one of them wakes if a wake-up came while they were taken (generation `since`).
   */
  handOut(idle: Sleeper[], runs: Carried[], since: number): void {
    idle.forEach((wake, index) => {
      if (index < runs.length) wake(runs[index]!);
      else if (this.signal.aborted) wake(null);
      else this.sleepers.push(wake);
    });
    if (this.sleepers.length === 0) return;
    if (this.generation !== since) this.wakeOne();
    else if (!this.timing) void this.keepTime();
  }

  /** The next wake time may have moved: the timer is set again, after a fresh read. */
  retime(): void {
    this.epoch++;
    this.changed?.();
  }

  private wakeAll(): void {
    this.generation++;
    this.retime();
    for (const wake of this.sleepers.splice(0)) wake(null);
  }

  /** Sleeps `ms` (a database error waited out), woken early only by a stop. */
  pause(ms: number): Promise<void> {
    if (this.signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(ms, MAX_TIMER_MS));
      this.signal.addEventListener("abort", done, { once: true });
    });
  }

  /**
   * Wakes one loop when the next run is due by time (or at the poll interval). While loops sleep,
   * a move of the wake time (retime) only makes it read the time again: the sleepers stay asleep.
   */
  private async keepTime(): Promise<void> {
    this.timing = true;
    let due = false;
    try {
      while (!due && this.sleepers.length > 0 && !this.signal.aborted) due = await this.untilWakeTime();
    } catch (error) {
      this.deps.log(`worker: reading the next wake time failed (${(error as Error)?.message ?? error})`);
      await this.pause(this.pollMs);
      due = true;
    } finally {
      this.timing = false;
    }
    if (due) this.wakeOne();
  }

  /** Waits until the next run is due by time (true), or until the wake time may have moved (false). */
  private async untilWakeTime(): Promise<boolean> {
    const epoch = this.epoch;
    if (!this.stopListening && Date.now() >= this.relistenAt) await this.listen();
    const cap = this.stopListening ? LISTENING_POLL_MS : this.pollMs;
    const untilWake = await msUntilNextWake(this.deps.db, this.deps.workflows);
    // Due now but not claimed (held by a concurrency limit, or by another claimer): poll.
    const ms = untilWake === null ? cap : untilWake <= 0 ? this.pollMs : Math.min(cap, Math.ceil(untilWake));
    if (this.epoch !== epoch) return false;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.changed = null;
        resolve();
      };
      // Past Node's timer limit setTimeout fires at once: wake at the limit, which only reads
      // the next wake time again (docs/rules.md, rule 19).
      const timer = setTimeout(done, Math.min(Math.max(ms, 1), MAX_TIMER_MS));
      this.changed = done;
    });
    return this.epoch === epoch;
  }

  /** Stops listening, once the housekeeping in flight is done (the database may close next). */
  async close(): Promise<void> {
    await this.housekeepingRun;
    const stop = this.stopListening;
    this.stopListening = null;
    await stop?.();
  }
}
