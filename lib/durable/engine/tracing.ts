// STUB (issue 14): OpenTelemetry spans. The interface create-durable.ts calls:
/** Runs one invocation (`tick`, `advance`, a worker's claim) inside a `durable.invocation` span. */
export function withInvocationSpan<T>(_kind: "tick" | "advance" | "work", fn: () => Promise<T>): Promise<T> {
  return fn();
}
