// Entry point for tests of your workflows: a durable instance on in-memory PGlite, and calls that
// drive a run as far as it can go now. No server, no cron, no clock of your own.
import type { z } from "zod";
import { connect } from "./drivers/connect";
import { createDurable, type Durable, type DurableOptions } from "./engine/create-durable";
import { RunNotFoundError } from "./errors";
import type { RunStatus } from "./schemas";
import type { AnyWorkflow, Duration } from "./types";

export interface TestDurableOptions extends Omit<DurableOptions, "db"> {
  /** Database URL; default an in-memory PGlite of its own ("memory://"). */
  url?: string;
}

export interface TestDurable extends Durable {
  /** Starts a run (idempotent on `id`) and drives it until it is finished or waits for time or a signal. */
  run<W extends AnyWorkflow>(workflow: W, input: z.input<W["input"]>, options?: { id?: string }): Promise<RunStatus>;
  /** Drives a run that exists until it is finished or waits (after a signal, or after `advanceClock`). */
  drive(id: string): Promise<RunStatus>;
  /** Moves the database clock of this instance forward: sleeps, retry delays and deadlines come due. */
  advanceClock(duration: Duration): Promise<void>;
}

// Each advance finishes the run, parks it, or gives it back because the budget ran out; a run
// still yielding after this many invocations is left as it is for the test to look at.
const MAX_ADVANCES = 1_000;

/**
 * A durable instance for tests, migrated and ready.
 *
 * @example
 * const durable = await createTestDurable({ workflows: [approval] });
 * const waiting = await durable.run(approval, { docId: "d-1" });   // waiting for "decision"
 * await durable.signal({ runId: waiting.id, name: "decision", payload: { approved: true } });
 * expect(await durable.drive(waiting.id)).toMatchObject({ status: "completed" });
 * await durable.close();
 */
export async function createTestDurable(options: TestDurableOptions): Promise<TestDurable> {
  const { url = "memory://", ...durableOptions } = options;
  // A fixed secret for status tokens: tests need no DURABLE_SECRET and print no warning about it.
  const secrets = { durable: "durable-testing-secret", ...durableOptions.secrets };
  const durable = createDurable({ ...durableOptions, secrets, db: await connect(url), testing: true });
  await durable.migrate();

  async function drive(id: string): Promise<RunStatus> {
    for (let i = 0; i < MAX_ADVANCES; i++) {
      const outcome = await durable.advance(id);
      // null: not due (waiting for a later time or a signal) or finished; "waiting" may have parked
      // on a wait that is already due, so one more advance decides.
      if (outcome === null) break;
      if (outcome === "completed" || outcome === "failed" || outcome === "lost") break;
    }
    const status = await durable.status(id);
    if (!status) throw new RunNotFoundError(id);
    return status;
  }

  return {
    ...durable,
    async run(workflow, input, runOptions = {}) {
      const { id } = await durable.start(workflow, input, runOptions);
      return drive(id);
    },
    drive,
    advanceClock: durable.testing.advanceClock,
  };
}
