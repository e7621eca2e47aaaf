/** The nine sources of the original stack (CONTRACT.md §9), with the CTE names `logs.all` gives them. */
export const DEFAULT_SOURCES = [
  { cte: 'edge_logs', name: 'cloudflare.logs.prod' },
  { cte: 'postgres_logs', name: 'postgres.logs' },
  { cte: 'function_edge_logs', name: 'deno-relay-logs' },
  { cte: 'function_logs', name: 'deno-subhosting-events' },
  { cte: 'auth_logs', name: 'gotrue.logs.prod' },
  { cte: 'realtime_logs', name: 'realtime.logs.prod' },
  { cte: 'storage_logs', name: 'storage.logs.prod.2' },
  { cte: 'postgrest_logs', name: 'postgREST.logs.prod' },
  { cte: 'pgbouncer_logs', name: 'pgbouncer.logs.prod' },
] as const;
