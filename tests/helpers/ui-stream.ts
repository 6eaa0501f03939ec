// Reads an AI SDK UI message stream (SSE: `id:` and `data:` lines, `[DONE]` at the end) off a
// response body with a parser of its own, so the chat routes' wire format is checked apart from
// the transport in lib/durable/react/.

export interface UiEvent {
  /** The event's `id:` line (a seq), if it had one. */
  id?: string;
  /** The parsed chunk, or "[DONE]". */
  data: { type: string; [key: string]: unknown } | "[DONE]";
}

/**
 * Reads events until the body ends or `stop(events)` holds (then cancels the body). Comments
 * (`: ping`) are skipped.
 */
export async function readUiEvents(
  response: Response,
  stop: (events: UiEvent[]) => boolean = () => false,
): Promise<{ events: UiEvent[]; ended: boolean }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const events: UiEvent[] = [];
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { events, ended: true };
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event: Partial<UiEvent> = {};
      for (const line of block.split("\n")) {
        if (line.startsWith("id: ")) event.id = line.slice(4);
        else if (line.startsWith("data: ")) {
          const text = line.slice(6);
          event.data = text === "[DONE]" ? "[DONE]" : JSON.parse(text);
        }
      }
      if (event.data !== undefined) events.push(event as UiEvent);
      end = buffer.indexOf("\n\n");
    }
    if (stop(events)) {
      await reader.cancel().catch(() => {});
      return { events, ended: false };
    }
  }
}

/** The types of the events, "[DONE]" for the end marker. */
export const typesOf = (events: UiEvent[]) => events.map((e) => (e.data === "[DONE]" ? "[DONE]" : e.data.type));

/** The text the events' `text-delta` chunks spell. */
export const textOf = (events: UiEvent[]) =>
  events.map((e) => (e.data !== "[DONE]" && e.data.type === "text-delta" ? String(e.data.delta) : "")).join("");
