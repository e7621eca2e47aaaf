/**
 * Fixture events moved to a test's own project, wherever their source keeps it (the top-level
 * `project`, `metadata.project` or `metadata.project_ref`), so rows of other tests never mix in.
 *
 *   reproject(event, (p) => (p === 'default' ? 'mine' : p))
 */
type Row = Record<string, unknown>;

export function reproject(event: Row, to: (project: unknown) => unknown): Row {
  const out: Row = { ...event };
  if ('project' in out) out.project = to(out.project);
  const m = out.metadata as Row | undefined;
  if (m && typeof m === 'object' && !Array.isArray(m)) {
    const metadata: Row = { ...m };
    if ('project' in metadata) metadata.project = to(metadata.project);
    if ('project_ref' in metadata) metadata.project_ref = to(metadata.project_ref);
    out.metadata = metadata;
  }
  return out;
}
