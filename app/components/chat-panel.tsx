"use client";
import { useChat } from "@ai-sdk/react";
import type { UIMessage } from "ai";
import { useEffect, useMemo, useRef, useState } from "react";
import { answerChatToolCall, pendingChatApprovals } from "@/app/chat/actions";
import { DurableChatTransport, turnEndOf, withTurnEnd } from "@/lib/durable/ai-react";
import { ChatMessage } from "./chat-message";

export interface ChatPanelProps {
  chatId: string;
  /** The chat as the server read it (`loadChat`): a finished turn's answer in it, one under way left to the resume. */
  initial: UIMessage[];
  /** The tool calls the chat's turn waits on, as the server read them (`toolApprovals`). */
  pending: string[];
  /** Prompts to try, each a button that sends it. */
  examples: string[];
  /** Link each answer to its run's page (the dashboard is on). */
  runLinks: boolean;
}

/**
 * The chat, over `useChat` with the toolkit's DurableChatTransport (docs/guide/chat.md): every turn
 * is a run whose answer is read from the run's stream, so a reload resumes it where the reader was
 * (`resume: true`), Stop cancels the run (what was written is kept), and a tool call that needs a
 * person waits, with nothing running, until Approve or Deny sends signal `tool-approval`; the rest
 * of the answer then streams in (`resumeStream`).
 */
export function ChatPanel({ chatId, initial, pending: pendingAtLoad, examples, runLinks }: ChatPanelProps) {
  const transport = useMemo(() => new DurableChatTransport({ api: "/api/chat" }), []);
  const chat = useChat({ id: chatId, messages: initial, transport, resume: true });
  const [input, setInput] = useState("");
  const [notice, setNotice] = useState<string | null>(null);
  // Until the page hydrates the form cannot send: say so to whoever waits on it (the e2e test).
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);

  const busy = chat.status === "submitted" || chat.status === "streaming";
  const { answered, answering, answer } = useToolApprovals({
    chatId,
    status: chat.status,
    shown: chat.messages,
    initial,
    pendingAtLoad,
    resumeStream: chat.resumeStream,
    setNotice,
  });
  const last = chat.messages.at(-1);
  const awaitingApproval = last?.role === "assistant" && requestedIn(last).some((id) => !answered.has(id));
  const canSend = !busy && !awaitingApproval;

  const send = (text: string) => {
    if (!text.trim() || !canSend) return;
    setNotice(null);
    void chat.sendMessage({ text: text.trim() });
    setInput("");
  };

  // Stop cancels the turn's run (the transport sends DELETE) and marks its answer stopped, as
  // loadChat marks it from the cancelled run on the next load; the mark goes with the message
  // into the next turn's input, so the history keeps it.
  const stop = async () => {
    await chat.stop();
    chat.setMessages(markStopped);
  };

  return (
    <section
      className="panel chat-panel"
      data-testid="chat"
      data-chat-status={chat.status}
      data-hydrated={hydrated ? "true" : undefined}
    >
      <ChatLog
        messages={chat.messages}
        busy={busy}
        runLinks={runLinks}
        answering={answering}
        answered={answered}
        onAnswer={answer}
      />
      {awaitingApproval ? (
        <p className="small muted" data-testid="approval-note">
          The turn waits for your answer to the call above; nothing runs meanwhile.
        </p>
      ) : null}
      {chat.error && !failedWithIt(last, chat.error) ? (
        <p className="small error-text" role="alert">
          {chat.error.message}
        </p>
      ) : null}
      {notice ? (
        <p className="action-message action-error" role="status">
          {notice}
        </p>
      ) : null}
      <ChatComposer
        input={input}
        setInput={setInput}
        busy={busy}
        canSend={canSend}
        examples={examples}
        send={send}
        stop={stop}
      />
    </section>
  );
}

/**
 * The tool calls of the chat that were answered, and a way to answer one. A call shows Approve and
 * Deny while the run waits on it. The stream says a call asked for approval; once the call is
 * answered the stream says so only with the tool's output, so the server is asked
 * (`toolApprovals`) each time an answer stops: a call that asked and no longer waits is answered.
 */
function useToolApprovals({
  chatId,
  status,
  shown,
  initial,
  pendingAtLoad,
  resumeStream,
  setNotice,
}: {
  chatId: string;
  status: string;
  /** The messages the chat shows now. */
  shown: UIMessage[];
  initial: UIMessage[];
  pendingAtLoad: string[];
  resumeStream: () => Promise<void>;
  setNotice: (notice: string | null) => void;
}) {
  const [answered, setAnswered] = useState(() => answeredOf(initial, pendingAtLoad));
  const messages = useRef(shown);
  messages.current = shown;
  useEffect(() => {
    if (status !== "ready") return;
    let current = true;
    pendingChatApprovals(chatId).then(
      (ids) => current && setAnswered(answeredOf(messages.current, ids)),
      () => {},
    );
    return () => {
      current = false;
    };
  }, [status, chatId]);
  const [answering, setAnswering] = useState<string | null>(null);
  const answer = async (toolCallId: string, approved: boolean) => {
    setAnswering(toolCallId);
    setNotice(null);
    try {
      const result = await answerChatToolCall(chatId, toolCallId, approved);
      if (!result.ok) setNotice(result.message);
      setAnswered((ids) => new Set([...ids, toolCallId]));
      // The run goes on from the approval: read the rest of its answer (a replay from the start).
      await resumeStream();
    } catch (e) {
      setNotice(`Sending the answer failed: ${(e as Error)?.message ?? e}`);
    } finally {
      setAnswering(null);
    }
  };
  return { answered, answering, answer };
}

/** The conversation so far, or what to ask when there is none. */
function ChatLog({
  messages,
  busy,
  ...answers
}: {
  messages: UIMessage[];
  busy: boolean;
  runLinks: boolean;
  answering: string | null;
  answered: Set<string>;
  onAnswer: (toolCallId: string, approved: boolean) => void;
}) {
  if (messages.length === 0) {
    return <p className="muted chat-empty">Ask about an order (1042, 1043 or 1044) or what is in stock.</p>;
  }
  return (
    <ol className="chat-log" aria-live="polite">
      {messages.map((message, i) => (
        <ChatMessage
          key={message.id}
          message={message}
          writing={busy && i === messages.length - 1 && message.role === "assistant"}
          {...answers}
        />
      ))}
    </ol>
  );
}

/** The message box with Send (Stop while an answer is written), and the example prompts. */
function ChatComposer({
  input,
  setInput,
  busy,
  canSend,
  examples,
  send,
  stop,
}: {
  input: string;
  setInput: (text: string) => void;
  busy: boolean;
  canSend: boolean;
  examples: string[];
  send: (text: string) => void;
  stop: () => Promise<void>;
}) {
  return (
    <>
      <form
        className="chat-form"
        onSubmit={(event) => {
          event.preventDefault();
          send(input);
        }}
      >
        <input
          className="chat-input"
          name="message"
          aria-label="Message"
          placeholder="lookupOrder 1042 and stock"
          value={input}
          maxLength={2000}
          onChange={(event) => setInput(event.target.value)}
        />
        {busy ? (
          <button type="button" className="button button-danger" onClick={() => void stop()}>
            Stop
          </button>
        ) : (
          <button type="submit" className="button button-primary" disabled={!canSend || !input.trim()}>
            Send
          </button>
        )}
      </form>
      <div className="chat-examples">
        <span className="small muted">Try:</span>
        {examples.map((example) => (
          <button
            key={example}
            type="button"
            className="button chat-example"
            disabled={!canSend}
            onClick={() => send(example)}
          >
            {example}
          </button>
        ))}
      </div>
    </>
  );
}

/** The messages with the last turn's answer marked stopped: a new answer when none had come yet. */
function markStopped(messages: UIMessage[]): UIMessage[] {
  const stopped = { status: "cancelled", reason: "stopped" } as const;
  const last = messages.at(-1);
  if (last?.role === "assistant") return [...messages.slice(0, -1), withTurnEnd(last, stopped)];
  return [...messages, withTurnEnd({ id: `stopped-${Date.now()}`, role: "assistant", parts: [] }, stopped)];
}

/** The answer already says the turn failed with this error (its turn's end, from the stream): no second notice. */
function failedWithIt(last: UIMessage | undefined, error: Error): boolean {
  const end = last?.role === "assistant" ? turnEndOf(last) : null;
  return end?.status === "failed" && end.reason === error.message;
}

/** The tool calls of a message that asked for approval (their part still says so). */
function requestedIn(message: UIMessage): string[] {
  return message.parts.flatMap((p) => ("toolCallId" in p && p.state === "approval-requested" ? [p.toolCallId] : []));
}

/** The calls that asked for approval in `messages` and are not among those the run waits on. */
function answeredOf(messages: UIMessage[], pending: string[]): Set<string> {
  const waiting = new Set(pending);
  return new Set(messages.flatMap(requestedIn).filter((id) => !waiting.has(id)));
}
