import Link from "next/link";

/** The list's filters as the URL holds them (`/?status=failed&tag=batch-7`); each narrows. */
export interface ListFilters {
  status?: string;
  workflow?: string;
  tag?: string;
  version?: string;
  parent?: string;
  /** Runs not yet past this patch (`list({ beforePatch })`, docs/guide/versions.md, "Patching"). */
  beforePatch?: string;
}

export const FILTER_FIELDS = ["status", "workflow", "tag", "version", "parent", "beforePatch"] as const;

/** The list's URL for these filters (and a cursor): only the fields given. */
export function listHref(filters: ListFilters, cursor?: string): string {
  const query = new URLSearchParams();
  for (const field of FILTER_FIELDS) {
    const value = filters[field];
    if (value) query.set(field, value);
  }
  if (cursor) query.set("cursor", cursor);
  const text = query.toString();
  return text ? `/?${text}` : "/";
}

/**
 * A plain GET form, so the filters live in the URL (a link or a reload keeps them) and it works
 * without JavaScript. The status stays what its tab says.
 */
export function RunFilters({ filters, workflows }: { filters: ListFilters; workflows: string[] }) {
  const narrowed = Boolean(filters.workflow || filters.tag || filters.version || filters.parent || filters.beforePatch);
  return (
    <form method="get" action="/" className="run-filters" data-testid="run-filters" aria-label="Filter runs">
      {filters.status ? <input type="hidden" name="status" value={filters.status} /> : null}
      <label className="field">
        <span>Workflow</span>
        <select name="workflow" defaultValue={filters.workflow ?? ""} className="text-input">
          <option value="">any</option>
          {workflows.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span>Tag</span>
        <input name="tag" defaultValue={filters.tag ?? ""} className="text-input" maxLength={64} />
      </label>
      <label className="field">
        <span>Version</span>
        <input name="version" defaultValue={filters.version ?? ""} className="text-input" maxLength={255} />
      </label>
      <label className="field">
        <span>Parent run</span>
        <input name="parent" defaultValue={filters.parent ?? ""} className="text-input" maxLength={255} />
      </label>
      <label className="field">
        <span>Before patch</span>
        <input name="beforePatch" defaultValue={filters.beforePatch ?? ""} className="text-input" maxLength={249} />
      </label>
      <div className="field field-buttons">
        <button type="submit" className="button">
          Filter
        </button>
        {narrowed ? <Link href={listHref({ status: filters.status })}>Clear</Link> : null}
      </div>
    </form>
  );
}
