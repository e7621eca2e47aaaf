import assert from 'node:assert/strict';
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../../src/sql/seeded-queries.js';
import { insertEvents } from '../support/db.js';
import { expectTranslation, runTranslation } from '../support/translation.js';

const PROJECT = 'sqltest-seeded';
const OTHER = 'sqltest-unrelated';

/** Bucket starts as the usage endpoint reports them: UTC DATETIME text. */
function bucket(iso: string, unit: 'minute' | 'hour' | 'day'): string {
  const d = new Date(iso);
  if (unit !== 'minute') d.setUTCMinutes(0, 0, 0);
  if (unit === 'day') d.setUTCHours(0);
  d.setUTCSeconds(0, 0);
  return d.toISOString().slice(0, 19);
}

function edge(timestamp: string, path: string, project = PROJECT) {
  return {
    timestamp,
    project,
    event_message: `GET | 200 | ${path}`,
    metadata: { request: { path, url: `https://${project}.supabase.co${path}`, method: 'GET' }, response: { status_code: 200 } },
  };
}

describe('seeded endpoint queries', () => {
  const now = Date.now();
  const at = (msAgo: number) => new Date(now - msAgo).toISOString();
  const times = { m2: at(2 * 60_000), m5: at(5 * 60_000), m30: at(30 * 60_000), h3: at(3 * 3600_000), d2: at(2 * 86400_000), d9: at(9 * 86400_000) };

  before(async () => {
    await insertEvents('cloudflare.logs.prod', [
      edge(times.m2, '/rest/v1/todos'),
      edge(times.m2, '/storage/v1/object'),
      edge(times.m5, '/auth/v1/token'),
      edge(times.m5, '/rest/v1/realtime'), // counts in both rest and realtime
      edge(times.m30, '/functions/v1/hello'), // no API area: zeros
      edge(times.h3, '/rest/v1/a'),
      edge(times.d2, '/realtime/v1/websocket'),
      edge(times.d9, '/rest/v1/old'), // outside every window
      edge(times.m2, '/rest/v1/other', OTHER),
    ]);
  });

  describe('usage.api-counts', () => {
    const usage = (interval: string) =>
      runTranslation(USAGE_API_COUNTS_SQL, { params: { interval, project: PROJECT.replace(/-/g, '\\-') }, maxRows: 1000 });

    it('when minutely, then counts per minute over the last 60 minutes', async () => {
      const expected = new Map<string, number[]>();
      const add = (iso: string, counts: number[]) => {
        const key = bucket(iso, 'minute');
        const prev = expected.get(key) ?? [0, 0, 0, 0];
        expected.set(key, prev.map((v, i) => v + counts[i]!));
      };
      add(times.m2, [1, 0, 0, 0]);
      add(times.m2, [0, 1, 0, 0]);
      add(times.m5, [0, 0, 1, 0]);
      add(times.m5, [1, 0, 0, 1]);
      add(times.m30, [0, 0, 0, 0]);
      const rows = [...expected.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([timestamp, c]) => ({
        timestamp, total_rest_requests: c[0], total_storage_requests: c[1], total_auth_requests: c[2], total_realtime_requests: c[3],
      }));
      const { rows: actual, translation } = await usage('minutely');
      assert.deepStrictEqual(actual, rows);
      assert.deepStrictEqual(translation.columns.map((c) => c.type), ['DATETIME', 'INT64', 'INT64', 'INT64', 'INT64']);
    });

    it('when hourly, then one bucket per hour of the last hour', async () => {
      const { rows } = await usage('hourly');
      const total = rows.reduce((n, r) => n + Number(r.total_rest_requests), 0);
      assert.equal(total, 2);
      assert.ok(rows.length >= 1 && rows.length <= 2);
      for (const r of rows) assert.match(String(r.timestamp), /^\d{4}-\d\d-\d\dT\d\d:00:00$/);
    });

    it('when daily, then buckets per UTC day over 7 days and nothing older', async () => {
      const { rows } = await usage('daily');
      const sum = (k: string) => rows.reduce((n, r) => n + Number(r[k]), 0);
      assert.deepStrictEqual([sum('total_rest_requests'), sum('total_storage_requests'), sum('total_auth_requests'), sum('total_realtime_requests')], [3, 1, 1, 2]);
      for (const r of rows) assert.match(String(r.timestamp), /T00:00:00$/);
      assert.ok(rows.some((r) => r.timestamp === bucket(times.d2, 'day')));
    });

    it('when no request matches the project, then no rows', async () => {
      await expectTranslation(USAGE_API_COUNTS_SQL, { params: { interval: 'daily', project: 'no-such-project-xyz' } }).toReturn([]);
    });
  });

  describe('logs.all', () => {
    it('when no window is given, then the newest edge logs of the project, newest first', async () => {
      const { rows } = await runTranslation(LOGS_ALL_SQL, { params: { project: PROJECT }, maxRows: 1000 });
      assert.deepStrictEqual(rows.map((r) => r.timestamp), [times.m2, times.m2, times.m5, times.m5, times.m30, times.h3, times.d2, times.d9]);
      const first = rows[0]!;
      assert.deepStrictEqual(Object.keys(first), ['id', 'timestamp', 'event_message', 'metadata']);
      assert.equal((first.metadata as { request: { path: string }[] }[])[0]!.request[0]!.path.startsWith('/'), true);
    });

    it('when a window is given, then start is exclusive and end inclusive', async () => {
      const { rows } = await runTranslation(LOGS_ALL_SQL, { params: { project: PROJECT, iso_timestamp_start: times.h3, iso_timestamp_end: times.m5 } });
      assert.deepStrictEqual(rows.map((r) => r.timestamp), [times.m5, times.m5, times.m30]);
    });

    it('when the bounds are empty strings, then they are ignored', async () => {
      const { rows } = await runTranslation(LOGS_ALL_SQL, { params: { project: PROJECT, iso_timestamp_start: '', iso_timestamp_end: '' } });
      assert.equal(rows.length, 8);
    });

    it('when sandboxed, then the caller reads another CTE of the endpoint', async () => {
      await insertEvents('deno-relay-logs', [{ timestamp: times.m2, event_message: 'fn call', metadata: { project_ref: PROJECT, request: { method: 'GET' } } }]);
      await insertEvents('realtime.logs.prod', [{ timestamp: times.m5, event_message: 'rt', metadata: { project: PROJECT, level: 'info' } }]);
      await expectTranslation(LOGS_ALL_SQL, {
        params: { project: PROJECT },
        sandboxSql: 'select event_message from function_edge_logs union all select event_message from realtime_logs order by event_message',
      }).toReturn([{ event_message: 'fn call' }, { event_message: 'rt' }]);
    });
  });
});
