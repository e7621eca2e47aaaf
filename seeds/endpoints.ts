/** The two endpoints of SEED-SPEC.md, with the settings of its section 2.2. */
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../src/sql/seeded-queries.js';
import type { EndpointFields } from '../src/endpoints/repository.js';

export const SEEDED_ENDPOINTS: EndpointFields[] = [
  {
    name: 'usage.api-counts',
    description: 'Requests per time bucket, split by API area (/rest, /storage, /auth, /realtime).',
    query: USAGE_API_COUNTS_SQL,
    parameters: [
      { name: 'interval', required: true, allowed_values: ['hourly', 'daily', 'minutely'], description: 'Bucket size and window: hourly = last hour by hour, daily = last 7 days by day, minutely = last 60 minutes by minute.' },
      { name: 'project', required: true, allowed_values: null, description: 'Regular expression matched against the request URL; selects the requests of one project.' },
    ],
    max_rows: 1000,
    cache_duration_seconds: 900,
    cache_warming_seconds: 300,
    sandboxable: true,
    redact_pii: false,
  },
  {
    name: 'logs.all',
    description: 'Log entries of one project within an optional time window; pass `sql` to query any of the nine source CTEs.',
    query: LOGS_ALL_SQL,
    parameters: [
      { name: 'project', required: true, allowed_values: null, description: 'Project reference to which entries are restricted.' },
      { name: 'iso_timestamp_start', required: false, allowed_values: null, description: 'Exclusive lower bound (ISO 8601). Missing or empty: no lower bound.' },
      { name: 'iso_timestamp_end', required: false, allowed_values: null, description: 'Inclusive upper bound (ISO 8601). Missing or empty: no upper bound.' },
    ],
    max_rows: 1000,
    cache_duration_seconds: 0,
    cache_warming_seconds: null,
    sandboxable: true,
    redact_pii: false,
  },
];
