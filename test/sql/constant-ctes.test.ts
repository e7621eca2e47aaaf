/**
 * A CTE that is one row of constants, read through a scalar subquery, is inlined as its
 * expression (src/sql/postgres/constantCte.ts) so the planner can see a window's bound. The rows
 * must be those of the subquery; CTEs that are not a row of constants stay subqueries.
 */
import assert from 'node:assert/strict';
import { insertEvents } from '../support/db.js';
import { expectTranslation, minutesAgo } from '../support/translation.js';

const P = 'sqltest-constant-cte';
const from = `from \`pgbouncer.logs.prod\` where project = '${P}'`;

describe('constant CTEs read by scalar subqueries', () => {
  before(() =>
    insertEvents('pgbouncer.logs.prod', [
      { project: P, timestamp: minutesAgo(10), event_message: 'recent' },
      { project: P, timestamp: minutesAgo(90), event_message: 'older' },
      { project: P, timestamp: minutesAgo(60 * 30), event_message: 'oldest' },
    ]),
  );

  it('when a window start comes from a one-row CTE chosen by a parameter, then it is inlined and filters like the subquery', async () => {
    const sql = `with dates as (select case when @interval = 'hourly' then timestamp_sub(current_timestamp(), interval 1 hour)
                                        when @interval = 'daily' then timestamp_sub(current_timestamp(), interval 1 day) end as start,
                                   'unused' as label)
      select count(*) as n ${from} and timestamp >= (select start from dates)`;
    const hourly = await expectTranslation(sql, { params: { interval: 'hourly' } }).toReturn([{ n: 1 }]);
    assert.doesNotMatch(hourly.sql.split('\n').slice(1).join('\n'), /FROM "dates"/, 'the subquery is gone');
    await expectTranslation(sql, { params: { interval: 'daily' } }).toReturn([{ n: 2 }]);
    // No branch matches: the bound is NULL, as the subquery's value would be.
    await expectTranslation(sql, { params: { interval: 'weekly' } }).toReturn([{ n: 0 }]);
  });

  it('when the one-row CTE aggregates, then it stays a subquery (count(*) of no FROM is 1, not a count of the outer rows)', async () => {
    const t = await expectTranslation(`with one as (select count(*) as n) select sum((select n from one)) as total ${from}`).toReturn([
      { total: 3 },
    ]);
    assert.match(t.sql, /FROM "one"/);
  });

  it('when the one-row CTE is a statistical aggregate (stddev of no FROM), then it stays a subquery and every reader row is kept', async () => {
    const t = await expectTranslation(
      'with r as (select 1 a union all select 2), k as (select stddev(1) v) select (select v from k) from r',
    ).toReturn([{ f0_: null }, { f0_: null }]);
    assert.match(t.sql, /FROM "k"/);
    await expectTranslation(
      'with r as (select 1 a union all select 2), k as (select stddev_pop(1) v) select (select v from k) as v from r',
    ).toReturn([{ v: 0 }, { v: 0 }]);
  });

  it('when the CTE has a FROM or a WHERE, then it stays a subquery', async () => {
    const t = await expectTranslation(
      `with newest as (select max(timestamp) as ts ${from}) select count(*) as n ${from} and timestamp = (select ts from newest)`,
    ).toReturn([{ n: 1 }]);
    assert.match(t.sql, /FROM "newest"/);
    const w = await expectTranslation(
      `with c as (select 5 as v where false) select count(*) as n ${from} and (select v from c) is null`,
    ).toReturn([{ n: 3 }]);
    assert.match(w.sql, /FROM "c"/);
  });
});
