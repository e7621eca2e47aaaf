import assert from 'node:assert/strict';
import request from 'supertest';
import { insertEvents } from '../support/db.js';
import { testApp } from '../support/http.js';

const MINUTE = 60_000,
  HOUR = 3_600_000,
  DAY = 86_400_000;
// The dashboard's values: 1hr = the last 60 minutes by minute, 1day = the last 24 hours by hour, 7day = the last 7 days by day.
const UNITS = { minutely: MINUTE, hourly: HOUR, daily: DAY, '1hr': MINUTE, '1day': HOUR, '7day': DAY } as const;
const WINDOWS = { minutely: 60 * MINUTE, hourly: HOUR, daily: 7 * DAY, '1hr': 60 * MINUTE, '1day': 24 * HOUR, '7day': 7 * DAY } as const;
type Interval = keyof typeof UNITS;

interface Req {
  at: number;
  path: string;
  host: string;
}

/** The expected rows, computed independently of the SQL: filter by window and host, bucket, count containment. */
function expectedRows(events: Req[], interval: Interval, now: number, hostPattern: RegExp) {
  const start = now - WINDOWS[interval];
  const buckets = new Map<number, number[]>();
  for (const e of events) {
    if (e.at < start || !hostPattern.test(`https://${e.host}${e.path}`)) continue;
    const bucket = Math.floor(e.at / UNITS[interval]) * UNITS[interval];
    const counts = buckets.get(bucket) ?? [0, 0, 0, 0];
    ['/rest', '/storage', '/auth', '/realtime'].forEach((text, i) => {
      if (e.path.includes(text)) counts[i]++;
    });
    buckets.set(bucket, counts);
  }
  return [...buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([bucket, c]) => ({
      timestamp: new Date(bucket).toISOString().slice(0, 19),
      total_rest_requests: c[0],
      total_storage_requests: c[1],
      total_auth_requests: c[2],
      total_realtime_requests: c[3],
    }));
}

/** The dashboard's call: GET the endpoint (by name unless `idOrName` is given) with `params`, with a query key. */
async function counts(params: Record<string, string>, idOrName = 'usage.api-counts') {
  const { app, keys } = await testApp();
  return request(app).get(`/api/endpoints/query/${idOrName}`).query(params).set('X-API-KEY', keys.query);
}

describe('usage.api-counts', () => {
  const tag = `usage${Date.now().toString(36)}`;
  const host = `${tag}.supabase.co`;
  const otherHost = `other-${tag}.example.com`;
  let now: number;
  const events: Req[] = [];

  before(async () => {
    now = Date.now();
    // Offsets keep every event at least 3 minutes from a window edge, so a slow run cannot move it across.
    const offsets = [
      2 * MINUTE,
      3 * MINUTE,
      17 * MINUTE,
      17.2 * MINUTE,
      50 * MINUTE,
      66 * MINUTE,
      2.5 * HOUR,
      30 * HOUR,
      3 * DAY,
      6.5 * DAY,
      7.5 * DAY,
    ];
    const paths = [
      '/rest/v1/orders',
      '/storage/v1/object/a.png',
      '/auth/v1/token',
      '/realtime/v1/websocket',
      '/functions/v1/hello',
      '/rest/v1/rpc/auth/storage',
    ];
    offsets.forEach((off, i) => {
      events.push({ at: now - off, path: paths[i % paths.length], host });
      events.push({ at: now - off, path: paths[(i + 1) % paths.length], host: otherHost });
    });
    events.push({ at: now - 10 * MINUTE, path: '/rest/v1/rpc/auth/storage', host }); // one request counted in three columns
    events.push({ at: now - 11 * MINUTE, path: '/functions/v1/none', host }); // a bucket with zeros
    await insertEvents(
      'cloudflare.logs.prod',
      events.map((e, i) => ({
        id: `${tag}-${i}`,
        timestamp: new Date(e.at).toISOString(),
        project: tag,
        event_message: `GET | 200 | ${e.path}`,
        metadata: {
          request: { path: e.path, url: `https://${e.host}${e.path}`, host: e.host, method: 'GET' },
          response: { status_code: 200 },
        },
      })),
    );
  });

  for (const interval of ['minutely', 'hourly', 'daily', '1hr', '1day', '7day'] as const) {
    it(`when called with interval=${interval}, then rows are the ${interval} buckets of the window, counted per path text, ascending`, async () => {
      const res = await counts({ interval, project: `^https://${tag}\\.` });
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers['content-type'], /^application\/json; charset=utf-8/);
      const expected = expectedRows(events, interval, Date.now(), new RegExp(`^https://${tag}\\.`));
      // Minutes and days always differ across the fixture; the hourly window may fall in one clock hour.
      assert.ok(expected.length >= (interval === 'hourly' ? 1 : 2), 'the fixture is not vacuous');
      assert.deepEqual(res.body, { result: expected });
    });
  }

  it('when a path contains several texts, then the request counts in each matching column; a bucket matching none has zeros', async () => {
    const res = await counts({ interval: 'minutely', project: tag });
    const byMinute = new Map(res.body.result.map((r: { timestamp: string }) => [r.timestamp, r]));
    const tenAgo = new Date(Math.floor((now - 10 * MINUTE) / MINUTE) * MINUTE).toISOString().slice(0, 19);
    const elevenAgo = new Date(Math.floor((now - 11 * MINUTE) / MINUTE) * MINUTE).toISOString().slice(0, 19);
    assert.deepEqual(byMinute.get(tenAgo), {
      timestamp: tenAgo,
      total_rest_requests: 1,
      total_storage_requests: 1,
      total_auth_requests: 1,
      total_realtime_requests: 0,
    });
    assert.deepEqual(byMinute.get(elevenAgo), {
      timestamp: elevenAgo,
      total_rest_requests: 0,
      total_storage_requests: 0,
      total_auth_requests: 0,
      total_realtime_requests: 0,
    });
  });

  it('when project is a regular expression, then it selects by URL, and nothing matching answers an empty result', async () => {
    const res = await counts({ interval: 'hourly', project: `(${tag}|nomatch)\\.supabase` });
    assert.equal(res.status, 200);
    assert.ok(res.body.result.length > 0);
    const none = await counts({ interval: 'hourly', project: `${tag}-does-not-exist` });
    assert.deepEqual(none.body, { result: [] });
  });

  it('when interval is not one of the allowed values, then 400 names the parameter and the allowed values', async () => {
    const res = await counts({ interval: 'weekly', project: tag });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.status, 'INVALID_ARGUMENT');
    assert.equal(res.body.error.errors[0].location, 'interval');
    assert.match(res.body.error.message, /hourly, daily, minutely, 1hr, 1day, 7day/);
  });

  for (const missing of ['interval', 'project']) {
    it(`when ${missing} is missing, then 400 names it`, async () => {
      const query: Record<string, string> = { interval: 'daily', project: tag };
      delete query[missing];
      const res = await counts(query);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body.error.errors[0], {
        domain: 'params',
        reason: 'missingParameter',
        message: res.body.error.message,
        location: missing,
      });
    });
  }

  it('when project is not a valid regular expression, then 400, not 500', async () => {
    const res = await counts({ interval: 'daily', project: '([unclosed' });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 400);
  });

  it('when the endpoint is addressed by UUID, then it answers the same as by name', async () => {
    const { context } = await testApp();
    const { rows } = await context.db.pool.query(`SELECT id FROM endpoints WHERE name = 'usage.api-counts'`);
    const byId = await counts({ interval: 'daily', project: tag }, rows[0].id);
    const byName = await counts({ interval: 'daily', project: tag });
    assert.equal(byId.status, 200);
    assert.deepEqual(byId.body, byName.body);
  });
});
