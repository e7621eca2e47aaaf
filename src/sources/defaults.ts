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

/** The edge source's default leaves from the release that made the API report's fields hot: today's less the Storage and Auth report fields. */
const REPORT_LEAVES: readonly HotLeaf[] = [
  { path: 'metadata.request.path', type: 'STRING', index: 'both' },
  { path: 'metadata.request.url', type: 'STRING', index: 'timestamp' },
  { path: 'metadata.request.method', type: 'STRING', index: 'project' },
  { path: 'metadata.response.status_code', type: 'INT64', index: 'project' },
  { path: 'metadata.request.search', type: 'STRING', index: 'project' },
  { path: 'metadata.response.origin_time', type: 'INT64', index: 'project' },
  { path: 'metadata.request.cf.country', type: 'STRING', index: 'project' },
  { path: 'metadata.request.headers.cf_connecting_ip', type: 'STRING', index: 'project' },
  { path: 'metadata.request.headers.content_length', type: 'STRING', index: 'project' },
  { path: 'metadata.response.headers.content_length', type: 'STRING', index: 'project' },
];

/**
 * Hot leaves of the default sources (src/storage/hotLeaves.ts): the leaves the dashboard's
 * queries filter and group on most (test/compat/studio/queries.json reads `response.status_code`,
 * `request.method`, `request.path` and `parsed.error_severity` far more than any other), and the
 * `request.url` that `usage.api-counts` matches the project against.
 *
 * Then what Studio's API report (`reports/api/*`, and the Realtime report, the same queries
 * filtered by path) reads besides those: `request.search` (three of its eight queries group by
 * it), `response.origin_time` (two average it), `request.cf.country` (requests by country), the
 * request's and the response's `headers.content_length` (network traffic), and
 * `request.headers.cf_connecting_ip`, which every request through the edge carries: its column
 * answers the `unnest(request.headers)` guard all eight have (src/storage/hotLeafFacts.ts, dense
 * from that depth). With them the report reads no row's `metadata` (BENCHMARKS.md, "Studio's
 * pages at volume"). The Storage report's `response.headers.cf_cache_status` (cache hit rate, top
 * misses) and the Auth report's `response.headers.x_sb_error_code` (errors by code) were the last
 * report fields read from `metadata`; at 10M events their 7-day queries passed the 15 s limit.
 * Types as the edge source's schema has them (seeds/source-fields.json).
 *
 * `index` (src/storage/coveringIndexes.ts): the per-project dashboard counts (status codes,
 * methods, paths of one project over a time range) and every report query read the
 * `(project, "timestamp")` index; the usage aggregate over all projects reads `url` and `path`
 * by time alone, so those two are in the `("timestamp")` one. `url` stays out of the project
 * index: it is the longest of them.
 *
 * An install whose leaves are exactly an earlier list of defaults (PREVIOUS_DEFAULT_HOT_LEAVES)
 * is brought to these at start-up (SourceService.ensureDefaults); one whose leaves were changed
 * through the API keeps them.
 */
export const DEFAULT_HOT_LEAVES: Readonly<Record<string, readonly HotLeaf[]>> = {
  'cloudflare.logs.prod': [
    ...REPORT_LEAVES,
    { path: 'metadata.response.headers.cf_cache_status', type: 'STRING', index: 'project' },
    { path: 'metadata.response.headers.x_sb_error_code', type: 'STRING', index: 'project' },
  ],
  'postgres.logs': [{ path: 'metadata.parsed.error_severity', type: 'STRING', index: 'project' }],
};

/**
 * The default hot leaves as earlier versions declared them, newest first. An install whose
 * stored leaves (path, type and index) are exactly one of these lists never chose its own, so
 * it gains today's defaults; any other list was set through the API and is left alone.
 */
export const PREVIOUS_DEFAULT_HOT_LEAVES: ReadonlyArray<Readonly<Record<string, readonly HotLeaf[]>>> = [
  { 'cloudflare.logs.prod': REPORT_LEAVES },
  {
    'cloudflare.logs.prod': [
      { path: 'metadata.request.path', type: 'STRING', index: 'both' },
      { path: 'metadata.request.url', type: 'STRING', index: 'timestamp' },
      { path: 'metadata.request.method', type: 'STRING', index: 'project' },
      { path: 'metadata.response.status_code', type: 'INT64', index: 'project' },
    ],
  },
];

/**
 * Today's default leaves of source `name` when its stored leaves (`index` resolved) are exactly an
 * earlier release's defaults, in any order; undefined when they are today's already or were
 * chosen by someone (any other list, the empty one included).
 */
export function upgradedDefaultLeaves(name: string, stored: readonly HotLeaf[]): readonly HotLeaf[] | undefined {
  const current = DEFAULT_HOT_LEAVES[name];
  if (!current || sameLeaves(stored, current)) return undefined;
  return PREVIOUS_DEFAULT_HOT_LEAVES.some((earlier) => earlier[name] && sameLeaves(stored, earlier[name])) ? current : undefined;
}

function sameLeaves(a: readonly HotLeaf[], b: readonly HotLeaf[]): boolean {
  const key = (l: HotLeaf) => `${l.path}\n${l.type}\n${l.index ?? 'project'}`;
  const keys = new Set(a.map(key));
  return a.length === b.length && keys.size === a.length && b.every((l) => keys.has(key(l)));
}
