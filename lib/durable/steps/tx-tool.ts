import type { Tool } from "ai";
import type { Transaction } from "kysely";
import type { AgentToolStep } from "../types";

const TX_EXECUTE = Symbol.for("durable-next.txTool");

/** What a `txTool`'s `execute` is given: the step's transaction, as `ctx.step.tx` gives it. */
export interface TxToolOptions<DB = any> {
  tx: Transaction<DB>;
  toolCallId: string;
  abortSignal: AbortSignal;
  experimental_context: AgentToolStep;
}

type TxExecute = (input: unknown, options: TxToolOptions) => Promise<unknown>;

/**
 * A tool whose effect is a write to this database: inside `ctx.step.ai.agent` its call is a `tx`
 * step, so the write and the call's receipt commit together, once (docs/guide/agents.md, "A tool
 * that writes to the database"). Outside an agent it cannot run: it has no transaction.
 */
export function txTool<INPUT, OUTPUT, DB = any>(
  definition: Omit<Tool<INPUT, OUTPUT>, "execute"> & {
    execute: (input: INPUT, options: TxToolOptions<DB>) => Promise<OUTPUT>;
  },
): Tool<INPUT, OUTPUT> {
  const { execute, ...rest } = definition;
  return {
    ...rest,
    execute: () => {
      throw new Error("a txTool runs only inside ctx.step.ai.agent, as a tx step");
    },
    [TX_EXECUTE]: execute,
  } as unknown as Tool<INPUT, OUTPUT>;
}

/** The transaction body of a `txTool`, or undefined for any other tool. */
export function txToolOf(tool: unknown): TxExecute | undefined {
  return (tool as Record<symbol, TxExecute> | undefined)?.[TX_EXECUTE];
}
