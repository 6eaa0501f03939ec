"use client";
import { getToolOrDynamicToolName, isToolOrDynamicToolUIPart, type UIMessage } from "ai";
import Link from "next/link";
import { type TurnEnd, turnEndOf } from "@/lib/durable/ai-react";

type Part = UIMessage["parts"][number];
type ToolPart = Extract<Part, { toolCallId: string }>;

/** What each state of a tool call reads as on the page. */
const TOOL_STATES: Record<ToolPart["state"], string> = {
  "input-streaming": "preparing the call",
  "input-available": "running",
  "approval-requested": "waits for your approval",
  "approval-responded": "answered",
  "output-available": "done",
  "output-error": "failed",
  "output-denied": "declined",
};

export interface ChatMessageProps {
  message: UIMessage;
  /** The last message while its answer is still coming: its last text part shows a cursor. */
  writing: boolean;
  /** Link a turn's run page (the dashboard is on). */
  runLinks: boolean;
  /** The call whose answer is being sent, if any: its buttons are disabled meanwhile. */
  answering: string | null;
  /** The calls that asked for approval and were answered since: no Approve and Deny for them. */
  answered: ReadonlySet<string>;
  onAnswer: (toolCallId: string, approved: boolean) => void;
}

/**
 * One message of the chat: the user's text, or the assistant's parts in the order they came: text,
 * and each tool call with its input, its state and its output. A call that waits for approval has
 * Approve and Deny (app/chat/actions.ts sends the signal). An answer whose turn was stopped or
 * failed ends with a marker that says so (its `TURN_END_PART`, docs/guide/chat.md).
 */
export function ChatMessage({ message, writing, runLinks, answering, answered, onAnswer }: ChatMessageProps) {
  const assistant = message.role === "assistant";
  const end = turnEndOf(message);
  return (
    <li
      className={assistant ? "chat-message chat-assistant" : "chat-message chat-user"}
      data-role={message.role}
      data-message-id={message.id}
    >
      <div className="chat-who">
        {assistant ? "Assistant" : "You"}
        {assistant && runLinks && message.id.startsWith("chat-turn-") ? (
          <Link className="chat-run-link" href={`/runs/${encodeURIComponent(message.id)}`}>
            its run
          </Link>
        ) : null}
      </div>
      <div className={writing ? "chat-body chat-writing" : "chat-body"}>
        {message.parts.map((part, at) =>
          part.type === "text" ? (
            <p key={keyOf(part, at)} className="chat-text" data-part="text">
              {part.text}
            </p>
          ) : part.type === "reasoning" ? (
            <p key={keyOf(part, at)} className="chat-reasoning small muted">
              {part.text}
            </p>
          ) : isToolOrDynamicToolUIPart(part) ? (
            <ToolCall
              key={part.toolCallId}
              part={part}
              waiting={part.state === "approval-requested" && !answered.has(part.toolCallId)}
              answering={answering}
              onAnswer={onAnswer}
            />
          ) : null,
        )}
        {end ? (
          <p className={`chat-turn-end chat-turn-${end.status}`} data-testid="turn-end" data-status={end.status}>
            {endLabel(end)}
          </p>
        ) : null}
      </div>
    </li>
  );
}

/** "Stopped" (with the cancel's reason when someone gave one), or "Failed: " and the error. */
function endLabel(end: TurnEnd): string {
  if (end.status === "failed") return `Failed: ${end.reason}`;
  return end.reason === "stopped" || end.reason === "cancelled" ? "Stopped" : `Stopped: ${end.reason}`;
}

/** A part's key: parts are only ever appended to a message, so a text part's place is its identity. */
const keyOf = (part: Part, at: number) => `${part.type}@${at}`;

function ToolCall({
  part,
  waiting,
  answering,
  onAnswer,
}: {
  part: ToolPart;
  waiting: boolean;
  answering: string | null;
  onAnswer: ChatMessageProps["onAnswer"];
}) {
  const name = getToolOrDynamicToolName(part);
  // Asked for approval, and no longer waited on: answered (its output follows in the stream).
  const state = part.state === "approval-requested" && !waiting ? "approval-responded" : part.state;
  return (
    <div
      className={waiting ? "chat-tool chat-tool-waiting" : "chat-tool"}
      data-testid="tool-call"
      data-tool={name}
      data-tool-call-id={part.toolCallId}
      data-tool-state={state}
    >
      <div className="chat-tool-head">
        <code className="chat-tool-name">{name}</code>
        <span className="chat-tool-state">{TOOL_STATES[state] ?? state}</span>
      </div>
      {part.input !== undefined ? <code className="chat-tool-io">{JSON.stringify(part.input)}</code> : null}
      {part.state === "output-available" ? (
        <code className="chat-tool-io chat-tool-output">→ {JSON.stringify(part.output)}</code>
      ) : part.state === "output-error" ? (
        <p className="small error-text">{part.errorText}</p>
      ) : null}
      {waiting ? (
        <div className="button-row">
          <button
            type="button"
            className="button button-primary"
            disabled={answering !== null}
            aria-busy={answering === part.toolCallId}
            onClick={() => onAnswer(part.toolCallId, true)}
          >
            Approve
          </button>
          <button
            type="button"
            className="button"
            disabled={answering !== null}
            onClick={() => onAnswer(part.toolCallId, false)}
          >
            Deny
          </button>
        </div>
      ) : null}
    </div>
  );
}
