import type { FlexibleSchema, Tool } from "ai";
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

/** A `txTool`: an AI SDK tool's description, schema and approval rule, and a body on the step's transaction. */
export interface TxToolDefinition<INPUT, OUTPUT, DB = any> {
  description?: string;
  inputSchema: FlexibleSchema<INPUT>;
  needsApproval?: boolean | ((input: INPUT, options: { toolCallId: string }) => boolean | PromiseLike<boolean>);
  execute: (input: INPUT, options: TxToolOptions<DB>) => Promise<OUTPUT>;
}

/**
 * A tool whose effect is a write to this database: inside `ctx.step.ai.agent` its call is a `tx`
 * step, so the write and the call's receipt commit together, once (docs/guide/agents.md, "A tool
 * that writes to the database"). Outside an agent it cannot run: it has no transaction.
 */
export function txTool<INPUT, OUTPUT, DB = any>(definition: TxToolDefinition<INPUT, OUTPUT, DB>): Tool<INPUT, OUTPUT> {
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
