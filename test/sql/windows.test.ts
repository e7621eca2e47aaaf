/** Window functions and QUALIFY, run on Postgres: numbering, navigation, aggregates over windows, frames, NULLs and ties. */
import assert from 'node:assert/strict';
import { SqlSyntaxError, SqlUnsupportedError } from '../../src/sql/index.js';
import { insertEvents } from '../support/db.js';
import { expectTranslation, inLastHour } from '../support/translation.js';

/** Rows (g, v, name): group a has a tie at 20 and a NULL v; group b has one row; group c none (an empty partition never appears). */
const ROWS = `with t as (
  select 'a' as g, 10 as v, 'x' as name union all
  select 'a', 20, 'y' union all
  select 'a', 20, 'z' union all
  select 'a', null, 'w' union all
  select 'b', 5, 'q'
)`;

describe('window functions', () => {
  it('when row_number / rank / dense_rank number a partition with ties, then ties share rank and dense_rank', async () => {
    await expectTranslation(`${ROWS} select name, row_number() over (partition by g order by v desc, name) as rn,
        rank() over (partition by g order by v desc) as rk, dense_rank() over (partition by g order by v desc) as dr
      from t order by g, rn`).toReturn([
      { name: 'y', rn: 1, rk: 1, dr: 1 },
      { name: 'z', rn: 2, rk: 1, dr: 1 },
      { name: 'x', rn: 3, rk: 3, dr: 2 },
      // BigQuery sorts NULL last when descending (Postgres would put it first)
      { name: 'w', rn: 4, rk: 4, dr: 3 },
      { name: 'q', rn: 1, rk: 1, dr: 1 },
    ]);
  });

  it('when ordering ascending, then NULL comes first as in BigQuery', async () => {
    await expectTranslation(`${ROWS} select name, row_number() over (order by v, name) as rn from t order by rn limit 2`).toReturn([
      { name: 'w', rn: 1 },
      { name: 'q', rn: 2 },
    ]);
  });

  it('when lag / lead take an offset and a default, then they read neighbours and fall back at the edges', async () => {
    await expectTranslation(`${ROWS} select name, lag(name) over (partition by g order by name) as prev,
        lead(v, 2, -1) over (partition by g order by name) as next2
      from t order by g, name`).toReturn([
      { name: 'w', prev: null, next2: 20 },
      { name: 'x', prev: 'w', next2: 20 },
      { name: 'y', prev: 'x', next2: -1 },
      { name: 'z', prev: 'y', next2: -1 },
      { name: 'q', prev: null, next2: -1 },
    ]);
  });

  it('when first_value / last_value / ntile run with and without a frame, then frames bound them', async () => {
    await expectTranslation(`${ROWS} select name, first_value(name) over (partition by g order by name) as first,
        last_value(name) over (partition by g order by name) as last_default,
        last_value(name) over (partition by g order by name rows between unbounded preceding and unbounded following) as last_all,
        ntile(2) over (partition by g order by name) as half
      from t where g = 'a' order by name`).toReturn([
      { name: 'w', first: 'w', last_default: 'w', last_all: 'z', half: 1 },
      { name: 'x', first: 'w', last_default: 'x', last_all: 'z', half: 1 },
      { name: 'y', first: 'w', last_default: 'y', last_all: 'z', half: 2 },
      { name: 'z', first: 'w', last_default: 'z', last_all: 'z', half: 2 },
    ]);
  });

  it('when aggregates are windows (running sum with RANGE peers, ROWS frame, countif, avg, OVER ()), then each row gets its window', async () => {
    await expectTranslation(`${ROWS} select name, sum(v) over (partition by g order by v) as running,
        sum(v) over (partition by g order by v rows between 1 preceding and current row) as pair,
        countif(v > 10) over (partition by g) as big, count(v) over () as nonnull, count(*) over () as total,
        avg(v) over (partition by g) as mean, min(v) over (partition by g) as lo, max(name) over (partition by g) as hi
      from t where g = 'a' order by name`).toReturn([
      { name: 'w', running: null, pair: null, big: 2, nonnull: 3, total: 4, mean: 50 / 3, lo: 10, hi: 'z' },
      { name: 'x', running: 10, pair: 10, big: 2, nonnull: 3, total: 4, mean: 50 / 3, lo: 10, hi: 'z' },
      // RANGE (the default with ORDER BY) includes both rows tied at 20
      { name: 'y', running: 50, pair: 30, big: 2, nonnull: 3, total: 4, mean: 50 / 3, lo: 10, hi: 'z' },
      { name: 'z', running: 50, pair: 40, big: 2, nonnull: 3, total: 4, mean: 50 / 3, lo: 10, hi: 'z' },
    ]);
  });

  it('when a window runs over an aggregate, then it sees the grouped rows (share of total)', async () => {
    await expectTranslation(`${ROWS} select g, count(*) as n, sum(count(*)) over () as total, count(*) / sum(count(*)) over () as share
      from t group by g order by g`).toReturn([
      { g: 'a', n: 4, total: 5, share: 0.8 },
      { g: 'b', n: 1, total: 5, share: 0.2 },
    ]);
  });

  it('when ORDER BY uses a window function, then rows are ordered by it', async () => {
    await expectTranslation(
      `${ROWS} select name from t where v is not null order by row_number() over (order by v desc, name) limit 2`,
    ).toReturn([{ name: 'y' }, { name: 'z' }]);
  });

  it('when the input is empty, then there are no rows (an empty partition has no window)', async () => {
    await expectTranslation(`${ROWS} select name, row_number() over (partition by g order by v) as rn from t where g = 'c'`).toReturn([]);
  });

  it('when a window function is used in WHERE, GROUP BY or HAVING, then SqlSyntaxError points at it', async () => {
    await expectTranslation(`${ROWS} select name from t where row_number() over () = 1`).toFail(
      SqlSyntaxError,
      /not allowed in WHERE.*line 7, column 28/s,
    );
    await expectTranslation(`${ROWS} select row_number() over () as r, count(*) as n from t group by 1`).toFail(
      SqlSyntaxError,
      /not allowed in GROUP BY/,
    );
    await expectTranslation(`${ROWS} select g, count(*) as n from t group by g having rank() over (order by g) = 1`).toFail(
      SqlSyntaxError,
      /not allowed in HAVING/,
    );
    await expectTranslation(`${ROWS} select g, row_number() over () as r from t group by g having r = 1`).toFail(
      SqlSyntaxError,
      /not allowed in HAVING/,
    );
  });

  it('when a window is misused, then a clear error', async () => {
    await expectTranslation(`${ROWS} select row_number() as r from t`).toFail(SqlSyntaxError, /needs an OVER clause/);
    await expectTranslation(`${ROWS} select rank() over () as r from t`).toFail(SqlSyntaxError, /needs ORDER BY/);
    await expectTranslation(`${ROWS} select lower(name) over () as r from t`).toFail(SqlSyntaxError, /takes no OVER/);
    await expectTranslation(`${ROWS} select sum(row_number() over ()) as r from t`).toFail(SqlSyntaxError, /cannot contain a window/);
    await expectTranslation(`${ROWS} select count(distinct v) over () as r from t`).toFail(SqlUnsupportedError, /DISTINCT/);
    await expectTranslation(`${ROWS} select row_number() over (order by v rows 1 preceding) as r from t`).toFail(
      SqlSyntaxError,
      /does not take a window frame/,
    );
  });

  it('when row_number() over () reads an ordered CTE, then the CTE keeps its ORDER BY (the numbering observes it)', async () => {
    const t = await expectTranslation(`${ROWS}, o as (select name from t where v is not null order by v desc, name)
      select name, row_number() over () as rn from o order by rn`).toReturn([
      { name: 'y', rn: 1 },
      { name: 'z', rn: 2 },
      { name: 'x', rn: 3 },
      { name: 'q', rn: 4 },
    ]);
    assert.match(t.sql, /"o" AS \(.*ORDER BY/s);
  });

  it('when a one-row CTE holds a window, then it is not inlined as a constant', async () => {
    const t = await expectTranslation('with c as (select row_number() over () as n) select (select n from c) as n').toReturn([{ n: 1 }]);
    assert.match(t.sql, /\(SELECT/);
  });
});

describe('QUALIFY', () => {
  it('when QUALIFY names a select alias, then only the qualifying rows remain, with names and types kept', async () => {
    const t = await expectTranslation(
      `${ROWS} select g, name, row_number() over (partition by g order by v desc, name) as rn from t qualify rn = 1 order by g`,
    ).toReturn([
      { g: 'a', name: 'y', rn: 1 },
      { g: 'b', name: 'q', rn: 1 },
    ]);
    assert.deepEqual(t.columns, [
      { name: 'g', type: 'STRING' },
      { name: 'name', type: 'STRING' },
      { name: 'rn', type: 'INT64' },
    ]);
  });

  it('when QUALIFY holds its own window call and columns, with ORDER BY not selected and LIMIT, then they apply after it', async () => {
    await expectTranslation(
      `${ROWS} select name from t qualify rank() over (partition by g order by v desc) <= 2 and g = 'a' order by v, name desc limit 2`,
    ).toReturn([{ name: 'z' }, { name: 'y' }]);
  });

  it('when QUALIFY meets DISTINCT, then DISTINCT applies after QUALIFY', async () => {
    await expectTranslation(`${ROWS} select distinct g from t qualify count(*) over (partition by g) > 1 order by g`).toReturn([
      { g: 'a' },
    ]);
  });

  it('when QUALIFY filters grouped rows, then it sees aggregates and windows over them', async () => {
    await expectTranslation(`${ROWS} select g, count(*) as n from t group by g qualify n = max(count(*)) over ()`).toReturn([
      { g: 'a', n: 4 },
    ]);
  });

  it('when QUALIFY filters rows of a source, with a parameter, then it runs', async () => {
    const P = 'sqltest-windows';
    const ts = (m: number) => inLastHour(m * 60_000);
    await insertEvents('deno-relay-logs', [
      { project: P, timestamp: ts(1), event_message: 'first', metadata: { request: { method: 'GET' } } },
      { project: P, timestamp: ts(2), event_message: 'second', metadata: { request: { method: 'GET' } } },
      { project: P, timestamp: ts(3), event_message: 'third', metadata: { request: { method: 'POST' } } },
    ]);
    await expectTranslation(
      `select r.method, t.event_message, t.timestamp from \`deno-relay-logs\` t cross join unnest(t.metadata) m cross join unnest(m.request) r
        where t.project = @p qualify row_number() over (partition by r.method order by t.timestamp desc) = 1 order by t.timestamp`,
      { params: { p: P } },
    ).toReturn([
      { method: 'GET', event_message: 'second', timestamp: ts(2) },
      { method: 'POST', event_message: 'third', timestamp: ts(3) },
    ]);
  });
});

describe('QUALIFY in a UNION ALL operand', () => {
  it('when a UNION ALL branch has QUALIFY, then it filters that branch only', async () => {
    await expectTranslation(
      `${ROWS} select name from t qualify row_number() over (order by v desc, name) = 1 union all select name from t where g = 'b' order by name`,
    ).toReturn([{ name: 'q' }, { name: 'y' }]);
  });
});
