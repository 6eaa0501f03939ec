// The client's side of run streams over SSE (docs/model.md, "Run streams"; docs/decisions.md,
// "Run streams over SSE, read by fetch"): the bytes a fetch body yields, turned into events.

/** One dispatched Server-Sent Event: its type ("message" when none was named), data and last event id. */
export interface SseEvent {
  type: string;
  data: string;
  id: string;
}

/**
 * A Server-Sent Events parser (the event-stream format of the HTML standard) fed with bytes as
 * they arrive: a line, a CRLF or a multi-byte character may be split across any two pushes.
 * An event is dispatched only at the blank line that ends it, so a response cut in mid-event
 * yields nothing of that event (and its id does not count as seen).
 */
export class SseParser {
  private readonly decoder = new TextDecoder();
  private buffer = "";
  private type = "";
  private data: string[] = [];
  private idBuffer = "";
  /** The id of the last dispatched event (the spec's "last event ID string"). */
  lastEventId = "";

  push(bytes: Uint8Array | string): SseEvent[] {
    this.buffer += typeof bytes === "string" ? bytes : this.decoder.decode(bytes, { stream: true });
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c !== "\n" && c !== "\r") continue;
      // A CR at the very end may be the first half of a CRLF: wait for the next push.
      if (c === "\r" && i === this.buffer.length - 1) break;
      this.line(this.buffer.slice(start, i), events);
      if (c === "\r" && this.buffer[i + 1] === "\n") i++;
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  private line(line: string, events: SseEvent[]) {
    if (line === "") return this.dispatch(events);
    if (line.startsWith(":")) return; // a comment (": ping")
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.type = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id" && !value.includes("\u0000")) this.idBuffer = value;
  }

  private dispatch(events: SseEvent[]) {
    this.lastEventId = this.idBuffer;
    if (this.data.length > 0)
      events.push({ type: this.type || "message", data: this.data.join("\n"), id: this.idBuffer });
    this.type = "";
    this.data = [];
  }
}
