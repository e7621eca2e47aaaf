import assert from 'node:assert/strict';
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../../seeds/queries.js';
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
  const times = {
    m2: at(2 * 60_000),
    m5: at(5 * 60_000),
    m30: at(30 * 60_000),
    h3: at(3 * 3600_000),
    d2: at(2 * 86400_000),
    d9: at(9 * 86400_000),
  };

  const events = [
    edge(times.m2, '/rest/v1/todos'),
    edge(times.m2, '/storage/v1/object'),
    edge(times.m5, '/auth/v1/token'),
    edge(times.m5, '/rest/v1/realtime'), // counts in both rest and realtime
    edge(times.m30, '/functions/v1/hello'), // no API area: zeros
    edge(times.h3, '/rest/v1/a'),
    edge(times.d2, '/realtime/v1/websocket'),
    edge(times.d9, '/rest/v1/old'), // outside every window
    edge(times.m2, '/rest/v1/other', OTHER),
  ];

  before(async () => {
    await insertEvents('cloudflare.logs.prod', events);
    // Other sources of the project must not show up in logs.all's result.
    await insertEvents('postgres.logs', [{ timestamp: times.m2, project: PROJECT, event_message: 'db' }]);
  });

  describe('usage.api-counts', () => {
    const AREAS = ['/rest', '/storage', '/auth', '/realtime'] as const;
    const WINDOWS = { minutely: [60 * 60_000, 'minute'], hourly: [3600_000, 'hour'], daily: [7 * 86400_000, 'day'] } as const;

    /** What the specification of usage.api-counts (docs/API.md) says the endpoint answers, computed from the fixture events. */
    function expectedRows(interval: keyof typeof WINDOWS) {
      const [length, unit] = WINDOWS[interval];
      const buckets = new Map<string, number[]>();
      for (const e of events) {
        if (e.project !== PROJECT || Date.parse(e.timestamp) < Date.now() - length) continue;
        const key = bucket(e.timestamp, unit);
        const counts = buckets.get(key) ?? [0, 0, 0, 0];
        AREAS.forEach((area, i) => {
          if (e.metadata.request.path.includes(area)) counts[i]++;
        });
        buckets.set(key, counts);
      }
      return [...buckets.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([timestamp, c]) => ({
          timestamp,
          total_rest_requests: c[0],
          total_storage_requests: c[1],
          total_auth_requests: c[2],
          total_realtime_requests: c[3],
        }));
    }

    for (const interval of ['minutely', 'hourly', 'daily'] as const) {
      it(`when ${interval}, then one row per ${WINDOWS[interval][1]} bucket of the window with the project's counts`, async () => {
        const expected = expectedRows(interval);
        assert.ok(expected.length > 0);
        const translation = await expectTranslation(USAGE_API_COUNTS_SQL, {
          params: { interval, project: PROJECT },
          maxRows: 1000,
        }).toReturn(expected);
        assert.deepStrictEqual(
          translation.columns.map((c) => c.type),
          ['DATETIME', 'INT64', 'INT64', 'INT64', 'INT64'],
        );
      });
    }

    it('when the session TimeZone is not UTC, then buckets are still UTC', async () => {
      await expectTranslation(USAGE_API_COUNTS_SQL, { params: { interval: 'daily', project: PROJECT }, timeZone: 'Asia/Kolkata' }).toReturn(
        expectedRows('daily'),
      );
    });

    it('when no request matches the project, then no rows', async () => {
      await expectTranslation(USAGE_API_COUNTS_SQL, { params: { interval: 'daily', project: 'no-such-project-xyz' } }).toReturn([]);
    });
  });

  describe('logs.all', () => {
    it('when no window is given, then the newest edge logs of the project, newest first', async () => {
      const { rows } = await runTranslation(LOGS_ALL_SQL, { params: { project: PROJECT }, maxRows: 1000 });
      assert.deepStrictEqual(
        rows.map((r) => r.timestamp),
        [times.m2, times.m2, times.m5, times.m5, times.m30, times.h3, times.d2, times.d9],
      );
      const first = rows[0];
      assert.deepStrictEqual(Object.keys(first), ['id', 'timestamp', 'event_message', 'metadata']);
      assert.equal((first.metadata as { request: { path: string }[] }[])[0].request[0].path.startsWith('/'), true);
    });

    it('when a window is given, then start is exclusive and end inclusive', async () => {
      const { rows } = await runTranslation(LOGS_ALL_SQL, {
        params: { project: PROJECT, iso_timestamp_start: times.h3, iso_timestamp_end: times.m5 },
      });
      assert.deepStrictEqual(
        rows.map((r) => r.timestamp),
        [times.m5, times.m5, times.m30],
      );
    });

    it('when the bounds are empty strings, then they are ignored', async () => {
      const { rows } = await runTranslation(LOGS_ALL_SQL, { params: { project: PROJECT, iso_timestamp_start: '', iso_timestamp_end: '' } });
      assert.equal(rows.length, 8);
    });

    it('when sandboxed, then the caller reads another CTE of the endpoint', async () => {
      await insertEvents('deno-relay-logs', [
        { timestamp: times.m2, event_message: 'fn call', metadata: { project_ref: PROJECT, request: { method: 'GET' } } },
      ]);
      await insertEvents('realtime.logs.prod', [
        { timestamp: times.m5, event_message: 'rt', metadata: { project: PROJECT, level: 'info' } },
      ]);
      await expectTranslation(LOGS_ALL_SQL, {
        params: { project: PROJECT },
        sandboxSql: 'select event_message from function_edge_logs union all select event_message from realtime_logs order by event_message',
      }).toReturn([{ event_message: 'fn call' }, { event_message: 'rt' }]);
    });
  });
});
