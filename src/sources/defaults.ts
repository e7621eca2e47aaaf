/** The default sources as data: what `logs.all` and start-up need (their schemas: defaultSchemas.ts). */
import type { HotLeaf } from '../storage/hotLeaves.js';

/** Where a source's events name their project: the top-level `project`, or a field of `metadata`. */
export type ProjectField = 'project' | 'metadata.project' | 'metadata.project_ref';

/**
 * The sources of the self-hosted stack, with the CTE names `logs.all` gives them and where each
 * keeps its project (docs/COMPATIBILITY.md, "Log sources"). The first nine are the original's; the rest are
 * the tables the dashboard's log explorer lists besides them, under names in the same style (the
 * original names none of them).
 */
export const DEFAULT_SOURCES: readonly { cte: string; name: string; project: ProjectField }[] = [
  { cte: 'edge_logs', name: 'cloudflare.logs.prod', project: 'project' },
  { cte: 'postgres_logs', name: 'postgres.logs', project: 'project' },
  { cte: 'function_edge_logs', name: 'deno-relay-logs', project: 'metadata.project_ref' },
  { cte: 'function_logs', name: 'deno-subhosting-events', project: 'metadata.project_ref' },
  { cte: 'auth_logs', name: 'gotrue.logs.prod', project: 'project' },
  { cte: 'realtime_logs', name: 'realtime.logs.prod', project: 'metadata.project' },
  { cte: 'storage_logs', name: 'storage.logs.prod.2', project: 'metadata.project' },
  { cte: 'postgrest_logs', name: 'postgREST.logs.prod', project: 'project' },
  { cte: 'pgbouncer_logs', name: 'pgbouncer.logs.prod', project: 'project' },
  { cte: 'supavisor_logs', name: 'supavisor.logs.prod', project: 'project' },
  { cte: 'pg_upgrade_logs', name: 'pg_upgrade.logs.prod', project: 'project' },
  { cte: 'etl_replication_logs', name: 'etl_replication.logs.prod', project: 'project' },
  { cte: 'multigres_logs', name: 'multigres.logs.prod', project: 'project' },
  { cte: 'auth_audit_logs', name: 'gotrue.audit.logs.prod', project: 'project' },
  { cte: 'supamonitor_logs', name: 'supamonitor.logs.prod', project: 'project' },
];

/**
 * Hot leaves of the default sources (src/storage/hotLeaves.ts): the leaves the dashboard's
 * queries filter and group on most (test/compat/studio/queries.json reads `response.status_code`,
 * `request.method`, `request.path` and `parsed.error_severity` far more than any other), and the
 * `request.url` that `usage.api-counts` matches the project against.
 *
 * `index` (src/storage/coveringIndexes.ts): the per-project dashboard counts (status codes,
 * methods, paths of one project over a time range) read the `(project, "timestamp")` index; the
 * usage aggregate over all projects reads `url` and `path` by time alone, so those two are in the
 * `("timestamp")` one. `url` stays out of the project index: it is the longest of the four.
 */
export const DEFAULT_HOT_LEAVES: Readonly<Record<string, readonly HotLeaf[]>> = {
  'cloudflare.logs.prod': [
    { path: 'metadata.request.path', type: 'STRING', index: 'both' },
    { path: 'metadata.request.url', type: 'STRING', index: 'timestamp' },
    { path: 'metadata.request.method', type: 'STRING', index: 'project' },
    { path: 'metadata.response.status_code', type: 'INT64', index: 'project' },
  ],
  'postgres.logs': [{ path: 'metadata.parsed.error_severity', type: 'STRING', index: 'project' }],
};
