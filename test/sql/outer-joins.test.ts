/** RIGHT / FULL joins and parenthesised joins, run on Postgres, including UNNEST of single records beside them. */
import assert from 'node:assert/strict';
import { SqlUnsupportedError } from '../../src/sql/index.js';
import { insertEvents } from '../support/db.js';
import { expectTranslation, inLastHour } from '../support/translation.js';

const P = 'sqltest-outer-joins';
const src = '`deno-relay-logs`';
const ts = (second: number) => inLastHour(second * 1000);
const KEYS = `k as (select 'GET' as method, 1 as n union all select 'PUT', 2 union all select cast(null as string), 3)`;
const VALS = `v as (select 'GET' as method, 'g' as x union all select 'POST', 'p')`;

describe('RIGHT / FULL and parenthesised joins', () => {
  before(async () => {
    await insertEvents('deno-relay-logs', [
      { project: P, timestamp: ts(1), event_message: 'get', metadata: { request: { method: 'GET' } } },
      { project: P, timestamp: ts(2), event_message: 'post', metadata: { request: { method: 'POST' } } },
      { project: P, timestamp: ts(3), event_message: 'no request', metadata: { response: { status_code: 500 } } },
    ]);
  });

  it('when RIGHT JOIN … ON keeps the right rows, then unmatched ones come with NULLs', async () => {
    await expectTranslation(`with ${KEYS}, ${VALS} select v.x, k.n from v right outer join k on v.method = k.method order by k.n`).toReturn(
      [
        { x: 'g', n: 1 },
        { x: null, n: 2 },
        { x: null, n: 3 },
      ],
    );
  });

  it('when FULL JOIN … USING merges the key, then the key is the non-NULL side and both sides are kept', async () => {
    await expectTranslation(
      `with ${KEYS}, ${VALS} select method, x, n from v full join k using (method) order by n nulls last, x`,
    ).toReturn([
      { method: 'GET', x: 'g', n: 1 },
      { method: 'PUT', x: null, n: 2 },
      { method: null, x: null, n: 3 },
      { method: 'POST', x: 'p', n: null },
    ]);
  });

  it('when a CTE is RIGHT JOINed against unnested single records, then records are joined for real and unmatched CTE rows stay', async () => {
    const t =
      await expectTranslation(`with ${KEYS} select t.event_message, k.method as key from ${src} t cross join unnest(t.metadata) m cross join unnest(m.request) r
        right join k on r.method = k.method and t.project = '${P}' order by k.n`).toReturn([
        { event_message: 'get', key: 'GET' },
        { event_message: null, key: 'PUT' },
        { event_message: null, key: null },
      ]);
    assert.match(t.sql, /jsonb_array_elements/);
    assert.doesNotMatch(t.sql, /IS NOT NULL/);
  });

  it('when a FULL JOIN meets unnested single records, then rows without the record are dropped before the join, not after', async () => {
    await expectTranslation(`with ${VALS} select t.event_message, v.x from (select * from ${src} where project = '${P}') t cross join unnest(t.metadata) m cross join unnest(m.request) r
        full join v on r.method = v.method order by t.event_message, v.x`).toReturn([
      { event_message: 'get', x: 'g' },
      { event_message: 'post', x: 'p' },
    ]);
    await expectTranslation(`with ${KEYS} select t.event_message, k.n from (select * from ${src} where project = '${P}') t cross join unnest(t.metadata) m cross join unnest(m.request) r
        full join k on r.method = k.method order by k.n nulls last, t.event_message`).toReturn([
      { event_message: 'get', n: 1 },
      { event_message: null, n: 2 },
      { event_message: null, n: 3 },
      { event_message: 'post', n: null },
    ]);
  });

  it('when LEFT JOIN UNNEST … ON TRUE sits beside a RIGHT JOIN, then missing records are NULL', async () => {
    await expectTranslation(`with ${KEYS} select t.event_message, r.method, k.n from (select * from ${src} where project = '${P}') t left join unnest(t.metadata) m on true left join unnest(m.request) r on true
        right join k on t.event_message = 'no request' and k.n = 3 order by k.n`).toReturn([
      { event_message: null, method: null, n: 1 },
      { event_message: null, method: null, n: 2 },
      { event_message: 'no request', method: null, n: 3 },
    ]);
  });

  it('when UNNEST is the right side of a RIGHT / FULL join, then SqlUnsupportedError (BigQuery refuses it too)', async () => {
    await expectTranslation(`select 1 as x from ${src} t right join unnest(t.metadata) m on true`).toFail(
      SqlUnsupportedError,
      /right side of a RIGHT JOIN/,
    );
  });

  it('when joins are parenthesised, then they group as written', async () => {
    await expectTranslation(
      `with ${KEYS}, ${VALS} select k.n, v.x, w.x as y from (k join v on k.method = v.method) join v as w on w.method = k.method`,
    ).toReturn([{ n: 1, x: 'g', y: 'g' }]);
    // k LEFT JOIN (v JOIN v2): the inner join happens first, so only GET matches and every k row stays.
    await expectTranslation(
      `with ${KEYS}, ${VALS} select k.n, v.x from k left join (v join v as v2 on v.method = v2.method and v2.x = 'g') on v.method = k.method order by k.n`,
    ).toReturn([
      { n: 1, x: 'g' },
      { n: 2, x: null },
      { n: 3, x: null },
    ]);
  });

  it('when a parenthesised join unnests a single record, then it reads as without parentheses', async () => {
    await expectTranslation(
      `select r.method from (${src} as t cross join unnest(t.metadata) as m) cross join unnest(m.request) as r where t.project = '${P}' order by t.timestamp`,
    ).toReturn([{ method: 'GET' }, { method: 'POST' }]);
    await expectTranslation(
      `with ${KEYS} select k.n, r.method from k left join (${src} as t cross join unnest(t.metadata) as m cross join unnest(m.request) as r) on r.method = k.method and t.project = '${P}' order by k.n`,
    ).toReturn([
      { n: 1, method: 'GET' },
      { n: 2, method: null },
      { n: 3, method: null },
    ]);
  });

  it('when an aggregating query over JSON leaves has a window, then the narrowing rewrite leaves it alone and counts match', async () => {
    await expectTranslation(`select r.method, count(*) as n, sum(count(*)) over () as total from ${src} t cross join unnest(t.metadata) m cross join unnest(m.request) r
        where t.project = '${P}' group by r.method order by r.method`).toReturn([
      { method: 'GET', n: 1, total: 2 },
      { method: 'POST', n: 1, total: 2 },
    ]);
  });
});
