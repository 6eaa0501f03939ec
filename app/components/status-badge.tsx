const LABELS: Record<string, string> = {
  pending: "Pending",
  running: "Running",
  waiting: "Waiting",
  completed: "Completed",
  failed: "Failed",
  cancelled: "Cancelled",
};

/** A run's or a step's status as a coloured pill; `data-status` lets tests find it. */
export function StatusBadge({ status, large = false }: { status: string; large?: boolean }) {
  return (
    <span className={`badge badge-${status}${large ? " badge-large" : ""}`} data-status={status}>
      <span className="badge-dot" aria-hidden />
      {LABELS[status] ?? status}
    </span>
  );
}
