// Tool calls for the mock model (./model.ts): which tools a conversation asks for, the calls the
// mock makes next, their arguments, and the sentences its text answer gives the tools' results.
// Everything is read from the messages of the request, so the same conversation gets the same calls.

type JsonSchema = Record<string, any>;

/** A message of an OpenAI chat completions request, as far as the mock reads it. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id?: string; function?: { name?: string } }[];
  tool_call_id?: string;
}

export interface ToolSpec {
  name: string;
  parameters: JsonSchema;
}

export interface PlannedCall {
  id: string;
  name: string;
  /** The arguments as the JSON text the API sends. */
  arguments: string;
}

/** A tool's result the model was sent after the last user message: the tool's name and the message content. */
export interface ToolResult {
  name: string;
  content: string;
}

/** How many asked-for tools the mock calls at once (parallel tool calls in one answer). */
const CALLS_PER_TURN = 2;

/** The tools of a request's `tools` (OpenAI format: `{ type: "function", function: { name, parameters } }`). */
export function toolsOf(body: Record<string, any>): ToolSpec[] {
  if (!Array.isArray(body.tools) || body.tool_choice === "none") return [];
  return body.tools
    .filter((tool: any) => tool?.type === "function" && typeof tool.function?.name === "string")
    .map((tool: any) => ({ name: tool.function.name as string, parameters: tool.function.parameters ?? {} }));
}

/**
 * The next (up to two) tools to call: those whose name occurs in the last user message (whole name,
 * any case, in the order they first occur there) and that no assistant message after it called yet.
 * Call ids are `call_<n>_<name>`, n counting the tool calls of the whole conversation from 1.
 */
export function nextToolCalls(
  messages: ChatMessage[],
  tools: ToolSpec[],
  prompt: string,
  argumentsFor: (tool: ToolSpec) => unknown,
): PlannedCall[] {
  if (tools.length === 0) return [];
  const lastUser = lastUserIndex(messages);
  const called = new Set<string>();
  let made = 0;
  messages.forEach((message, i) => {
    for (const call of message.role === "assistant" ? (message.tool_calls ?? []) : []) {
      made++;
      if (i > lastUser && typeof call.function?.name === "string") called.add(call.function.name);
    }
  });
  const asked = tools
    .map((tool) => ({ tool, at: wholeNameAt(prompt, tool.name) }))
    .filter(({ tool, at }) => at >= 0 && !called.has(tool.name))
    .sort((a, b) => a.at - b.at);
  return asked.slice(0, CALLS_PER_TURN).map(({ tool }) => ({
    id: `call_${++made}_${tool.name}`,
    name: tool.name,
    arguments: JSON.stringify(argumentsFor(tool) ?? {}),
  }));
}

/** The tool messages after the last user message, each named by the assistant's call it answers. */
export function toolResults(messages: ChatMessage[]): ToolResult[] {
  const names = new Map<string, string>();
  const out: ToolResult[] = [];
  for (const message of messages.slice(lastUserIndex(messages) + 1)) {
    for (const call of message.role === "assistant" ? (message.tool_calls ?? []) : []) {
      if (call.id && call.function?.name) names.set(call.id, call.function.name);
    }
    if (message.role !== "tool") continue;
    const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content ?? "");
    out.push({ name: names.get(message.tool_call_id ?? "") ?? message.tool_call_id ?? "tool", content });
  }
  return out;
}

/**
 * Arguments for a tool: the prompt's first run of digits for a string or number property whose name
 * ends in `id` (`orderId`), anything else as `objectFor` makes it from the schema and the prompt.
 */
export function toolArguments(schema: JsonSchema, prompt: string, objectFor: (schema: JsonSchema) => unknown): unknown {
  const value = objectFor(schema);
  const digits = /\d+/.exec(prompt)?.[0];
  if (!digits || !value || typeof value !== "object" || Array.isArray(value)) return value;
  const out = value as Record<string, unknown>;
  for (const [key, child] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    if (!/(id|Id|ID)$/.test(key)) continue;
    const types = Array.isArray(child.type) ? child.type : [child.type];
    if (types.includes("string")) out[key] = digits;
    else if (types.includes("integer") || types.includes("number")) out[key] = Number(digits);
  }
  return out;
}

/** One sentence per tool result: ` <name> answered <content>.` echoing, `The <name> tool answered …` in prose. */
export function resultSentences(results: ToolResult[], echoes: boolean): string {
  return results
    .map(({ name, content }) => {
      const stop = /[.!?]$/.test(content) ? "" : ".";
      return echoes ? ` ${name} answered ${content}${stop}` : `The ${name} tool answered ${content}${stop} `;
    })
    .join("");
}

function lastUserIndex(messages: ChatMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === "user") return i;
  return -1;
}

/** Where the name first occurs in the text as a whole name (no letter, digit, `_` or `-` either side), or -1. */
function wholeNameAt(text: string, name: string): number {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![\\w-])${escaped}(?![\\w-])`, "i").exec(text)?.index ?? -1;
}
