/** The two seeded endpoints and their settings (docs/API.md, "Seeded endpoints"). */
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from './queries.js';
import type { EndpointFields } from '../src/endpoints/repository.js';

export const SEEDED_ENDPOINTS: EndpointFields[] = [
  {
    name: 'usage.api-counts',
    description: 'Requests per time bucket, split by API area (/rest, /storage, /auth, /realtime).',
    query: USAGE_API_COUNTS_SQL,
    parameters: [
      {
        name: 'interval',
        required: true,
        allowed_values: ['hourly', 'daily', 'minutely', '1hr', '1day', '7day'],
        description:
          'Bucket size and window: hourly = last hour by hour, daily = last 7 days by day, minutely = last 60 minutes by minute; as the dashboard sends them: 1hr = last 60 minutes by minute, 1day = last 24 hours by hour, 7day = last 7 days by day.',
      },
      {
        name: 'project',
        required: true,
        allowed_values: null,
        description: 'Regular expression matched against the request URL; selects the requests of one project.',
      },
    ],
    max_rows: 1000,
    cache_duration_seconds: 900,
    cache_warming_seconds: 300,
    sandboxable: true,
    redact_pii: false,
  },
  {
    name: 'logs.all',
    description:
      'Log entries of one project within an optional time window; pass `sql` to query any of its source CTEs (edge_logs, postgres_logs, …).',
    query: LOGS_ALL_SQL,
    parameters: [
      { name: 'project', required: true, allowed_values: null, description: 'Project reference to which entries are restricted.' },
      {
        name: 'iso_timestamp_start',
        required: false,
        allowed_values: null,
        description: 'Exclusive lower bound (ISO 8601). Missing or empty: no lower bound.',
      },
      {
        name: 'iso_timestamp_end',
        required: false,
        allowed_values: null,
        description: 'Inclusive upper bound (ISO 8601). Missing or empty: no upper bound.',
      },
    ],
    max_rows: 1000,
    cache_duration_seconds: 0,
    cache_warming_seconds: null,
    sandboxable: true,
    redact_pii: false,
  },
];

/**
 * SHA-256 of the queries earlier releases seeded, by endpoint name. A seeded endpoint whose query
 * is still one of these (an operator never edited it) is brought to the current definition at
 * start (src/seed.ts); an edited one is left alone.
 */
export const SUPERSEDED_SEEDED_QUERIES: Readonly<Record<string, readonly string[]>> = {
  // Before the dashboard's intervals (1hr, 1day, 7day).
  'usage.api-counts': ['d4b292da888c907c48754dd344b49fdb6e11caec3fec59814e9ac7ab9d9dec41'],
  // Before the six newer log tables (supavisor_logs, …).
  'logs.all': ['42c0cef8b9c1de03a7765f67f0fb48316db78fd08e4dde3fcc8c39ffb22a27d9'],
};
