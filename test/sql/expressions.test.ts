import { insertEvents } from '../support/db.js';
import { expectTranslation } from '../support/translation.js';

const P = 'sqltest-expressions';
const T0 = new Date(Math.floor(Date.now() / 86400_000) * 86400_000 - 86400_000 + 12 * 3600_000).toISOString();

describe('expressions', () => {
  before(() =>
    insertEvents('cloudflare.logs.prod', [
      {
        project: P,
        timestamp: T0,
        event_message: 'e1',
        metadata: { request: { path: '/rest/v1', method: 'GET' }, response: { status_code: 503, origin_time: 1.5 } },
      },
      {
        project: P,
        timestamp: T0,
        event_message: 'e2',
        metadata: { request: { path: '/auth/v1', method: 'POST' }, response: { status_code: 200, origin_time: 2 } },
      },
    ]),
  );
  const from = `from \`cloudflare.logs.prod\` t cross join unnest(t.metadata) m cross join unnest(m.request) req cross join unnest(m.response) res where t.project = '${P}'`;

  it('when CASE is written in both forms, then both choose the right branch', async () => {
    await expectTranslation(
      `select case 2 when 1 then 'one' when 2 then 'two' end as a, case when 1 > 2 then 'x' else 'y' end as b, case when false then 1 end as c`,
    ).toReturn([{ a: 'two', b: 'y', c: null }]);
  });

  it('when casting to each type, then values convert like BigQuery', async () => {
    await expectTranslation(`select cast('42' as int64) as i, cast(2.5 as int64) as r, cast('1.5' as float64) as f, cast('1.25' as numeric) as n,
      cast('true' as bool) as b, cast(12 as string) as s, cast('2026-01-02 03:04:05' as timestamp) as ts,
      cast('2026-01-02 03:04:05' as datetime) as dt, cast('2026-01-02' as date) as d`).toReturn([
      { i: 42, r: 3, f: 1.5, n: 1.25, b: true, s: '12', ts: '2026-01-02T03:04:05.000Z', dt: '2026-01-02T03:04:05', d: '2026-01-02' },
    ]);
  });

  it('when SAFE_CAST meets a bad value, then NULL instead of an error', async () => {
    await expectTranslation(
      `select safe_cast('x' as int64) as i, safe_cast('7' as int64) as j, safe_cast('nope' as timestamp) as t, safe_cast('maybe' as bool) as b`,
    ).toReturn([{ i: null, j: 7, t: null, b: null }]);
  });

  it('when IN / NOT IN / BETWEEN / LIKE / IS NULL test values, then they answer like BigQuery', async () => {
    await expectTranslation(
      `select 2 in (1, 2) as a, 3 not in (1, 2) as b, 5 between 1 and 5 as c, 'abc' like 'a%' as d, 'abc' not like '%z' as e, null is null as f, 1 is not null as g`,
    ).toReturn([{ a: true, b: true, c: true, d: true, e: true, f: true, g: true }]);
  });

  it('when dividing integers, then the result is floating point', async () => {
    await expectTranslation(`select 7 / 2 as a, 6 / 3 as b, 2 * 3 + 1 as c, -(4) as d`).toReturn([{ a: 3.5, b: 2, c: 7, d: -4 }]);
  });

  it('when a numeric JSON leaf is compared with a number, then numbers are compared', async () => {
    await expectTranslation(`select t.event_message ${from} and res.status_code >= 500`).toReturn([{ event_message: 'e1' }]);
    await expectTranslation(`select t.event_message ${from} and res.origin_time > 1.75`).toReturn([{ event_message: 'e2' }]);
  });

  it('when a string JSON leaf is compared with a string, then strings are compared', async () => {
    await expectTranslation(`select t.event_message ${from} and req.path = '/auth/v1'`).toReturn([{ event_message: 'e2' }]);
  });

  it('when a timestamp column is compared with a string literal, then timestamps are compared', async () => {
    const before = new Date(Date.parse(T0) - 1000).toISOString().replace('T', ' ').replace('Z', '');
    await expectTranslation(
      `select count(*) as n from \`cloudflare.logs.prod\` where project = '${P}' and timestamp > '${before}'`,
    ).toReturn([{ n: 2 }]);
    await expectTranslation(`select count(*) as n from \`cloudflare.logs.prod\` where project = '${P}' and timestamp > '${T0}'`).toReturn([
      { n: 0 },
    ]);
  });

  it('when INTERVAL is added, then time moves by that unit', async () => {
    await expectTranslation(
      `select timestamp_add(timestamp '2026-01-01 00:00:00', interval 90 minute) as a, timestamp_sub(timestamp '2026-01-01', interval 1 day) as b`,
    ).toReturn([{ a: '2026-01-01T01:30:00.000Z', b: '2025-12-31T00:00:00.000Z' }]);
  });

  it('when a parameter is compared with a number, then it is cast', async () => {
    await expectTranslation(`select 5 > @n as a, @s as s`, { params: { n: '3', s: 'text' } }).toReturn([{ a: true, s: 'text' }]);
  });
});
