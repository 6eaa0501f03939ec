/**
 * Whether the page follows the run. Only the browser polls, so the server's render (and a page
 * whose script has not run) says "Snapshot"; "Live" shows once the client runs its effects.
 */
export function LiveState({
  terminal,
  clientRunning,
  error,
}: {
  terminal: boolean;
  clientRunning: boolean;
  error: string | null;
}) {
  const [state, value, note] = terminal
    ? ["off", "Finished", "polling stopped"]
    : !clientRunning
      ? ["off", "Snapshot", "as the server read it; reload to update"]
      : error
        ? ["error", "Reconnecting", error]
        : ["on", "Live · polling", "the status route, with the run's token"];
  return (
    <>
      <span className={`stat-value live live-${state}`} data-testid="live-state">
        {value}
      </span>
      <span className="stat-note">{note}</span>
    </>
  );
}
