import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../paths.js';
import { normaliseEvents } from '../ingest/normalise.js';
import type { FieldMap } from './schema.js';

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

/**
 * The schema a default source starts with: inferred from its sample event in seeds/fixtures,
 * so that `logs.all` (whose CTEs name fields such as `metadata.project_ref`) translates before
 * the first event of that source arrives. Ingest widens it as new fields appear.
 */
export function defaultSourceSchema(name: string): FieldMap {
  const file = path.join(PROJECT_ROOT, 'seeds', 'fixtures', `${name}.json`);
  if (!fs.existsSync(file)) return {};
  const sample = JSON.parse(fs.readFileSync(file, 'utf8'));
  const { fields } = normaliseEvents([{ ...sample, timestamp: undefined }], { nowMs: Date.now(), retentionDays: 1 });
  return fields;
}
