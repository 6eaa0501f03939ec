// What `durable-next runs` prints for a person (docs/guide/cli.md, "Listing runs" and "Reading a
// run"): `ls` a table, `get` the run's fields and, with --steps, its ledger. With --json the command
// prints the call's answer itself (runs.ts); nothing here is parsed by a script. The shapes below
// are the fields these views read of `list()`'s RunSummary and `status()`'s RunStatus (lib/durable/schemas.ts).

interface ErrorShape {
  code: string;
  message: string;
}

export interface SummaryView {
  id: string;
  workflow: string;
  version: string | null;
  status: string;
  createdAt: string;
  updatedAt: string;
  wakeAt: string | null;
  waitingFor: { kind: string; name: string } | null;
  error: ErrorShape | null;
  attempts: number;
  warnings: string[];
  parentId?: string | null;
  deadlineAt?: string | null;
  tags?: string[];
  metadata?: Record<string, unknown>;
  forkedFrom?: { runId: string; stepId: string } | null;
  continuedAs?: string | null;
  continuedFrom?: string | null;
}

export interface StepView {
  id: string;
  kind: string;
  status: string;
  attempt: number;
  completedAt: string | null;
  error: ErrorShape | null;
}

export interface StatusView extends SummaryView {
  output: unknown;
  steps: StepView[];
}

/** Rows under a header, each column as wide as its widest cell; the last column is not padded. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/** One line per value: a control character or newline in stored text never breaks the table. */
const flat = (text: string) =>
  Array.from(text, (c) => (c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127 ? " " : c)).join("");

/** `runs ls`: the page as a table, and the flag that pages on. */
export function listText(page: { runs: SummaryView[]; nextCursor: string | null }): string {
  if (page.runs.length === 0) return "no runs match";
  const rows = page.runs.map((r) => [flat(r.id), flat(r.workflow), r.status, r.createdAt, r.updatedAt]);
  const text = table(["ID", "WORKFLOW", "STATUS", "CREATED", "UPDATED"], rows);
  return page.nextCursor === null ? text : `${text}\nmore: the same command with --cursor ${page.nextCursor}`;
}

const errorText = (e: ErrorShape | null) => (e ? flat(`${e.code}: ${e.message}`) : null);

/** `runs get`: the fields that are set, one per line, and the steps when asked. */
export function statusText(run: StatusView, withSteps: boolean): string {
  const fields: [string, string | null | undefined][] = [
    ["id", flat(run.id)],
    ["workflow", flat(run.version === null ? run.workflow : `${run.workflow} (version ${run.version})`)],
    ["status", run.status],
    ["created", run.createdAt],
    ["updated", run.updatedAt],
    ["waiting for", run.waitingFor ? flat(`${run.waitingFor.kind} ${run.waitingFor.name}`) : null],
    ["wakes at", run.wakeAt],
    ["deadline", run.deadlineAt],
    ["attempts", String(run.attempts)],
    ["tags", run.tags && run.tags.length > 0 ? flat(run.tags.join(", ")) : null],
    ["metadata", run.metadata && Object.keys(run.metadata).length > 0 ? JSON.stringify(run.metadata) : null],
    ["parent", run.parentId],
    ["forked from", run.forkedFrom ? flat(`${run.forkedFrom.runId} at step ${run.forkedFrom.stepId}`) : null],
    ["continued from", run.continuedFrom],
    ["continued as", run.continuedAs],
    ["error", errorText(run.error)],
    ["output", run.status === "completed" ? JSON.stringify(run.output) : null],
    ["warnings", run.warnings.length > 0 ? flat(run.warnings.join("; ")) : null],
    ["steps", withSteps ? null : `${run.steps.length} (--steps lists them)`],
  ];
  const shown = fields.filter((f): f is [string, string] => f[1] !== null && f[1] !== undefined);
  const width = Math.max(...shown.map(([name]) => name.length));
  const text = shown.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join("\n");
  if (!withSteps) return text;
  if (run.steps.length === 0) return `${text}\n\nno steps yet`;
  const rows = run.steps.map((s) => [
    flat(s.id),
    s.kind,
    s.status,
    String(s.attempt),
    s.completedAt ?? "",
    errorText(s.error) ?? "",
  ]);
  return `${text}\n\n${table(["STEP", "KIND", "STATUS", "ATTEMPT", "COMPLETED", "ERROR"], rows)}`;
}
