/**
 * The uncached query scenarios: each as a dashboard sends it (a seeded endpoint, or BigQuery SQL
 * sandboxed over `logs.all`'s CTEs with the dashboard's time window as `iso_timestamp_start` /
 * `iso_timestamp_end`), and the floor: the best hand-written Postgres SQL for the same answer,
 * run with `pg` directly. The runner checks that both return the same rows.
 */
import { translateQuery } from '../src/sql/index.js';
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../seeds/queries.js';
import type { SourceLookup } from '../src/sources/schema.js';
import { BENCH_PROJECT } from './data.js';

const HOUR_MS = 3_600_000;

export interface Scenario {
  id: string;
  title: string;
  /** Endpoint to call (the uncached usage copy is created by the runner). */
  endpoint: string;
  /** Query-string parameters, given the time the run is anchored at. */
  params: (nowMs: number) => Record<string, string>;
  /** Caller SQL (BigQuery dialect) for the `sql` parameter of a sandboxed endpoint. */
  sql?: string;
  /** The floor: Postgres SQL and its values. */
  floor: (nowMs: number) => { text: string; values: unknown[] };
  /**
   * Rows compared with the floor. The usage windows end "now" (current_timestamp), so their first
   * bucket is partial and moves between two runs: compared from the second bucket on.
   */
  compareFrom?: number;
  /** A query whose window is fixed by parameters (pruning): part of the scaling scenario. */
  window: boolean;
}

export const USAGE_UNCACHED = 'bench.usage-api-counts-uncached';
const EDGE = 'logs.cloudflare_logs_prod';
const iso = (ms: number) => new Date(ms).toISOString();
const windowParams = (hours: number) => (now: number) => ({
  project: BENCH_PROJECT,
  iso_timestamp_start: iso(now - hours * HOUR_MS),
  iso_timestamp_end: iso(now),
});
const windowValues = (hours: number, now: number) => [BENCH_PROJECT, iso(now - hours * HOUR_MS), iso(now)];

/** The usage endpoint's hand-written equivalent: only the two leaves it needs, strpos for the literal texts and for the caller's project ref (no metacharacters). */
function usageFloor(interval: 'hourly' | 'daily' | 'minutely') {
  const unit = { hourly: 'hour', daily: 'day', minutely: 'minute' }[interval];
  const window = { hourly: '1 hour', daily: '7 days', minutely: '60 minutes' }[interval];
  return () => ({
    text: `SELECT date_trunc('${unit}', ts)::timestamp AS timestamp,
       count(*) FILTER (WHERE strpos(path, '/rest') > 0) AS total_rest_requests,
       count(*) FILTER (WHERE strpos(path, '/storage') > 0) AS total_storage_requests,
       count(*) FILTER (WHERE strpos(path, '/auth') > 0) AS total_auth_requests,
       count(*) FILTER (WHERE strpos(path, '/realtime') > 0) AS total_realtime_requests
  FROM (SELECT "timestamp" AS ts, r->>'path' AS path, r->>'url' AS url
          FROM (SELECT "timestamp", metadata->0->'request'->0 AS r FROM ${EDGE}
                 WHERE "timestamp" >= now() - interval '${window}' OFFSET 0) x) y
 WHERE strpos(url, $1) > 0
 GROUP BY 1 ORDER BY 1`,
    values: [BENCH_PROJECT],
  });
}

const usage = (interval: 'hourly' | 'daily' | 'minutely'): Scenario => ({
  id: `usage-${interval}`,
  title: `usage.api-counts, ${interval}`,
  endpoint: USAGE_UNCACHED,
  params: () => ({ interval, project: BENCH_PROJECT }),
  floor: usageFloor(interval),
  compareFrom: 1,
  window: true,
});

export const SCENARIOS: Scenario[] = [
  usage('minutely'),
  usage('hourly'),
  usage('daily'),
  {
    id: 'logs-all',
    title: 'logs.all (100 newest edge rows of a project)',
    endpoint: 'logs.all',
    params: () => ({ project: BENCH_PROJECT }),
    floor: () => ({
      text: `SELECT id, "timestamp", event_message, metadata FROM ${EDGE} WHERE project = $1 ORDER BY "timestamp" DESC LIMIT 100`,
      values: [BENCH_PROJECT],
    }),
    window: false,
  },
  {
    id: 'a-chart',
    title: '(a) edge chart per minute, 6 h, ok/warning/error',
    endpoint: 'logs.all',
    params: windowParams(6),
    sql: `select
  timestamp_trunc(t.timestamp, minute) as timestamp,
  countif(response.status_code < 400) as ok_count,
  countif(response.status_code >= 400 and response.status_code < 500) as warning_count,
  countif(response.status_code >= 500) as error_count
from edge_logs t
  cross join unnest(t.metadata) as metadata
  cross join unnest(metadata.response) as response
group by timestamp
order by timestamp asc`,
    floor: (now) => ({
      text: `SELECT date_trunc('minute', "timestamp") AS timestamp,
       count(*) FILTER (WHERE s < 400) AS ok_count,
       count(*) FILTER (WHERE s >= 400 AND s < 500) AS warning_count,
       count(*) FILTER (WHERE s >= 500) AS error_count
  FROM (SELECT "timestamp", (metadata->0->'response'->0->>'status_code')::bigint AS s FROM ${EDGE}
         WHERE project = $1 AND "timestamp" > $2 AND "timestamp" <= $3) x
 GROUP BY 1 ORDER BY 1`,
      values: windowValues(6, now),
    }),
    window: true,
  },
  {
    id: 'b-pg-errors',
    title: '(b) postgres logs with severity ERROR/FATAL/PANIC, 24 h, newest 100',
    endpoint: 'logs.all',
    params: windowParams(24),
    sql: `select t.id, t.timestamp, t.event_message, parsed.error_severity
from postgres_logs t
  cross join unnest(t.metadata) as m
  cross join unnest(m.parsed) as parsed
where parsed.error_severity in ('ERROR', 'FATAL', 'PANIC')
order by t.timestamp desc
limit 100`,
    floor: (now) => ({
      text: `SELECT id, "timestamp", event_message, metadata->0->'parsed'->0->>'error_severity' AS error_severity
  FROM logs.postgres_logs
 WHERE project = $1 AND "timestamp" > $2 AND "timestamp" <= $3
   AND metadata->0->'parsed'->0->>'error_severity' IN ('ERROR', 'FATAL', 'PANIC')
 ORDER BY "timestamp" DESC LIMIT 100`,
      values: windowValues(24, now),
    }),
    window: true,
  },
  {
    id: 'c-5xx',
    title: '(c) count of 5xx, 24 h',
    endpoint: 'logs.all',
    params: windowParams(24),
    sql: `select count(*) as count
from edge_logs t
  cross join unnest(t.metadata) as m
  cross join unnest(m.response) as r
where r.status_code >= 500`,
    floor: (now) => ({
      text: `SELECT count(*) AS count FROM ${EDGE}
 WHERE project = $1 AND "timestamp" > $2 AND "timestamp" <= $3
   AND (metadata->0->'response'->0->>'status_code')::bigint >= 500`,
      values: windowValues(24, now),
    }),
    window: true,
  },
  {
    id: 'd-newest',
    title: '(d) newest 100 edge requests in a 1-hour window',
    endpoint: 'logs.all',
    params: windowParams(1),
    sql: `select t.id, t.timestamp, request.method, request.path, response.status_code, t.event_message
from edge_logs t
  cross join unnest(t.metadata) as m
  cross join unnest(m.request) as request
  cross join unnest(m.response) as response
order by t.timestamp desc
limit 100`,
    floor: (now) => ({
      text: `SELECT id, "timestamp", metadata->0->'request'->0->>'method' AS method, metadata->0->'request'->0->>'path' AS path,
       (metadata->0->'response'->0->>'status_code')::bigint AS status_code, event_message
  FROM ${EDGE}
 WHERE project = $1 AND "timestamp" > $2 AND "timestamp" <= $3
 ORDER BY "timestamp" DESC LIMIT 100`,
      values: windowValues(1, now),
    }),
    window: true,
  },
  {
    id: 'e-top-paths',
    title: '(e) top 10 paths by count, 24 h',
    endpoint: 'logs.all',
    params: windowParams(24),
    sql: `select request.path as path, count(*) as count
from edge_logs t
  cross join unnest(t.metadata) as m
  cross join unnest(m.request) as request
group by path
order by count desc, path
limit 10`,
    floor: (now) => ({
      text: `SELECT metadata->0->'request'->0->>'path' AS path, count(*) AS count FROM ${EDGE}
 WHERE project = $1 AND "timestamp" > $2 AND "timestamp" <= $3
 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10`,
      values: windowValues(24, now),
    }),
    window: true,
  },
];

/**
 * A scenario as the service translates it (the endpoint, with the scenario's `sql` sandboxed over
 * it, rows capped at 1,000), with its parameter values: what the benchmarks send with `pg`.
 */
export function translatedScenario(s: Scenario, sources: SourceLookup, now: number): { text: string; values: unknown[] } {
  const params = s.params(now);
  const query = s.endpoint === 'logs.all' ? LOGS_ALL_SQL : USAGE_API_COUNTS_SQL;
  const t = translateQuery({ query, sandboxSql: s.sql, sources, maxRows: 1000 });
  return { text: t.sql, values: t.parameters.map((p) => params[p] ?? null) };
}
