import assert from 'node:assert/strict';
import { insertEvents, testDatabase } from '../support/db.js';
import { expectTranslation, inLastHour, runTranslation } from '../support/translation.js';

const P = 'sqltest-joins';
const src = '`deno-relay-logs`';
const ts = (second: number) => inLastHour(second * 1000);

describe('joins and UNNEST', () => {
  before(async () => {
    await insertEvents('deno-relay-logs', [
      {
        project: P,
        timestamp: ts(1),
        event_message: 'with request',
        metadata: { project_ref: P, request: { method: 'GET', pathname: '/a' }, response: { status_code: 200 } },
      },
      { project: P, timestamp: ts(2), event_message: 'no request', metadata: { project_ref: P, response: { status_code: 500 } } },
      { project: P, timestamp: ts(3), event_message: 'no metadata' },
    ]);
    await insertEvents('gotrue.logs.prod', [
      { project: P, timestamp: ts(1), event_message: 'two args', metadata: { args: ['a', 'b'], level: 'info' } },
      { project: P, timestamp: ts(2), event_message: 'empty args', metadata: { args: [], level: 'warn' } },
    ]);
  });

  it('when CROSS JOIN UNNEST meets a missing record, then the row is dropped', async () => {
    await expectTranslation(
      `select t.event_message, r.method from ${src} t cross join unnest(t.metadata) as m cross join unnest(m.request) as r where t.project = '${P}' order by t.timestamp`,
    ).toReturn([{ event_message: 'with request', method: 'GET' }]);
  });

  it('when WHERE compares a leaf of the unnested record, then rows without the record stay dropped (the guard is implied)', async () => {
    const from = `from ${src} t cross join unnest(t.metadata) as m cross join unnest(m.request) as r where t.project = '${P}'`;
    const t = await expectTranslation(`select t.event_message ${from} and r.method = 'GET'`).toReturn([{ event_message: 'with request' }]);
    assert.doesNotMatch(t.sql, /IS NOT NULL/, 'the comparison implies the record is there');
    await expectTranslation(`select t.event_message ${from} and lower(r.method) in ('get', 'post') and r.pathname like '/%'`).toReturn([
      { event_message: 'with request' },
    ]);
  });

  it('when WHERE does not reject a missing leaf, then the guard stays and rows without the record are still dropped', async () => {
    const from = `from ${src} t cross join unnest(t.metadata) as m cross join unnest(m.request) as r where t.project = '${P}'`;
    // 'no request' has no request record: a NULL method there must not let it through.
    const isNull = await expectTranslation(`select t.event_message ${from} and r.pathname is null`).toReturn([]);
    assert.match(isNull.sql, /IS NOT NULL/);
    await expectTranslation(`select t.event_message ${from} and (r.method = 'GET' or t.event_message = 'no request')`).toReturn([
      { event_message: 'with request' },
    ]);
    await expectTranslation(`select t.event_message ${from} and coalesce(r.method, 'none') = 'none'`).toReturn([]);
  });

  it('when LEFT JOIN UNNEST … ON TRUE meets a missing record, then the row stays with NULLs', async () => {
    await expectTranslation(
      `select t.event_message, r.method from ${src} t left join unnest(t.metadata) as m on true left join unnest(m.request) as r on true where t.project = '${P}' order by t.timestamp`,
    ).toReturn([
      { event_message: 'with request', method: 'GET' },
      { event_message: 'no request', method: null },
      { event_message: 'no metadata', method: null },
    ]);
  });

  it('when a comma join unnests, then it is a cross join', async () => {
    await expectTranslation(
      `select event_message from ${src} t, unnest(t.metadata) as m where t.project = '${P}' order by t.timestamp`,
    ).toReturn([{ event_message: 'with request' }, { event_message: 'no request' }]);
  });

  it('when a real array is unnested, then one row per element and an empty array drops the row', async () => {
    await expectTranslation(
      `select a from \`gotrue.logs.prod\` t cross join unnest(t.metadata) as m cross join unnest(m.args) as a where t.project = '${P}' order by a`,
    ).toReturn([{ a: 'a' }, { a: 'b' }]);
  });

  it('when a JSON array is indexed with OFFSET / SAFE_OFFSET / ORDINAL, then elements come out typed', async () => {
    await expectTranslation(
      `select m.args[offset(1)] as a, m.args[safe_offset(5)] as b, m.args[ordinal(1)] as c from \`gotrue.logs.prod\` t cross join unnest(t.metadata) as m where t.project = '${P}' and m.level = 'info'`,
    ).toReturn([{ a: 'b', b: null, c: 'a' }]);
  });

  it('when a real array is LEFT JOINed, then an empty array keeps the row', async () => {
    await expectTranslation(
      `select event_message, a from \`gotrue.logs.prod\` t cross join unnest(t.metadata) as m left join unnest(m.args) as a on true where t.project = '${P}' order by t.timestamp, a`,
    ).toReturn([
      { event_message: 'two args', a: 'a' },
      { event_message: 'two args', a: 'b' },
      { event_message: 'empty args', a: null },
    ]);
  });

  it('when the unnest alias shadows the column, then the alias wins', async () => {
    await expectTranslation(
      `select metadata.project_ref as ref from ${src} t cross join unnest(metadata) as metadata where t.project = '${P}' order by t.timestamp limit 1`,
    ).toReturn([{ ref: P }]);
  });

  it('when a field of an unnested record is unqualified, then it resolves', async () => {
    await expectTranslation(
      `select pathname from ${src} t cross join unnest(t.metadata) as m cross join unnest(m.request) as r where t.project = '${P}' and method = 'GET'`,
    ).toReturn([{ pathname: '/a' }]);
  });

  it('when grouping by a JSON leaf (narrowed into an inner query), then groups, HAVING and ORDER BY still match', async () => {
    await expectTranslation(`select r.method, lower(r.method) as low, count(*) as n, max(r.pathname) as p from ${src} t
        cross join unnest(t.metadata) as m left join unnest(m.request) as r on true
        where t.project = '${P}' group by r.method having count(*) >= 1 order by r.method nulls first`).toReturn([
      { method: null, low: null, n: 1, p: null },
      { method: 'GET', low: 'get', n: 1, p: '/a' },
    ]);
  });

  it('when stddev reads a leaf grouped by another leaf (narrowed), then it aggregates each group in the outer query', async () => {
    const t =
      await expectTranslation(`select m.project_ref, stddev_pop(r.status_code) as pop, round(stddev(r.status_code), 2) as samp, count(*) as n
      from ${src} t cross join unnest(t.metadata) as m cross join unnest(m.response) as r
      where t.project = '${P}' group by m.project_ref`).toReturn([{ project_ref: P, pop: 150, samp: 212.13, n: 2 }]);
    // The outer query aggregates the inner query's columns; the inner one only reads them.
    assert.match(t.sql, /^SELECT [^\n]*stddev_pop\(\(\("t\d+"\."c\d+"/, t.sql);
    assert.match(t.sql, /\nOFFSET NULL\) AS "t\d+"\n/, t.sql);
  });

  it('when an aggregate is narrowed (its inner query fenced), then Postgres may still run it in parallel workers, with the same rows', async () => {
    const bq = `select r.method, count(*) as n from ${src} t cross join unnest(t.metadata) as m cross join unnest(m.request) as r
      where t.project = '${P}' group by r.method`;
    const { translation, rows } = await runTranslation(bq);
    assert.deepEqual(rows, [{ method: 'GET', n: 1 }]);
    assert.match(translation.sql, /\nOFFSET NULL\) AS "t\d+"\n/, translation.sql);
    const client = await (await testDatabase()).pool.connect();
    try {
      await client.query('BEGIN');
      // Puts a Gather on top of any plan that may run in a worker: one whose every level may. With
      // the fence `OFFSET 0` the subquery's level may not (src/sql/postgres/narrow.ts), and a 7-day
      // report's aggregate ran on one core. (Named force_parallel_mode before Postgres 16.)
      const setting = (await client.query(`SELECT name FROM pg_settings WHERE name IN ('debug_parallel_query', 'force_parallel_mode')`))
        .rows[0].name;
      await client.query(`SET LOCAL ${setting} = on`);
      await client.query('SET LOCAL jit = off');
      const plan = (await client.query(`EXPLAIN ${translation.sql}`)).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      assert.match(plan, /^Gather/, plan);
      assert.match(plan, /Subquery Scan/, 'the fence still keeps the inner query a subquery (not pulled up)');
      const parallel = (await client.query(translation.sql)).rows;
      assert.deepEqual(
        parallel.map((r) => ({ method: r.method, n: Number(r.n) })),
        rows,
      );
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('when several aggregates test one leaf, then metadata is read once per row and the counts are right', async () => {
    const t = await expectTranslation(`select timestamp_trunc(t.timestamp, hour) as h,
        countif(r.status_code < 400) as ok, countif(r.status_code >= 400 and r.status_code < 500) as warn, countif(r.status_code >= 500) as err
      from ${src} t cross join unnest(t.metadata) as m cross join unnest(m.response) as r
      where t.project = '${P}' group by h`).toReturn([{ h: ts(0).slice(0, 13) + ':00:00.000Z', ok: 1, warn: 0, err: 1 }]);
    assert.equal(t.sql.split('"metadata"').length - 1, 1, t.sql);
  });

  it('when grouping by a leaf of a CROSS JOINed record, then rows without the record are not a group (the guard moves out with the record)', async () => {
    const t =
      await expectTranslation(`select r.method, count(*) as n from ${src} t cross join unnest(t.metadata) as m cross join unnest(m.request) as r
      where t.project = '${P}' group by r.method`).toReturn([{ method: 'GET', n: 1 }]);
    assert.match(t.sql, /WHERE \("t\d+"\."c\d+" IS NOT NULL\)\nGROUP BY/);
  });

  it('when an aggregate over a moved record also names a column of the table (count distinct … then id), then the column moves in too', async () => {
    await expectTranslation(`select r.method, count(distinct case when resp.status_code >= 200 then t.id end) as ok, count(distinct case when resp.status_code >= 500 then id end) as errors
      from ${src} t cross join unnest(t.metadata) as m cross join unnest(m.request) as r cross join unnest(m.response) as resp
      where t.project = '${P}' group by r.method`).toReturn([{ method: 'GET', ok: 1, errors: 0 }]);
  });

  it('when an aggregate tests a leaf only behind AND, then the leaf is not read for rows the AND skips', async () => {
    // cast('GET' as int64) fails: computed for every row in the inner query, this would be an error.
    await expectTranslation(`select timestamp_trunc(t.timestamp, hour) as h, countif(t.event_message = 'numeric method' and cast(r.method as int64) > 0) as n
      from ${src} t cross join unnest(t.metadata) as m cross join unnest(m.request) as r
      where t.project = '${P}' group by h`).toReturn([{ h: ts(0).slice(0, 13) + ':00:00.000Z', n: 0 }]);
  });

  it('when CTEs are joined with JOIN USING and INNER / LEFT JOIN ON, then rows match', async () => {
    await expectTranslation(`
      with a as (select 1 as k, 'x' as v union all select 2, 'y'),
           b as (select 1 as k, 'p' as w)
      select a.k, v, w from a join b using (k)
      union all
      select a.k, a.v, b.w from a left join b on a.k = b.k and b.w = 'none'
      order by 1, 3`).toReturn([
      { k: 1, v: 'x', w: 'p' },
      { k: 1, v: 'x', w: null },
      { k: 2, v: 'y', w: null },
    ]);
  });

  it('when CROSS JOIN and INNER JOIN combine CTEs, then the product is filtered', async () => {
    await expectTranslation(
      `with a as (select 1 as x union all select 2), b as (select 10 as y) select a.x, y from a cross join b inner join a as a2 on a2.x = a.x order by x`,
    ).toReturn([
      { x: 1, y: 10 },
      { x: 2, y: 10 },
    ]);
  });
});
