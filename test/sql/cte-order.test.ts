/**
 * A CTE's ORDER BY without LIMIT is dropped when no reader can observe the order
 * (src/sql/postgres/cteOrder.ts), so the planner need not produce the rows in order. A reader
 * that passes the CTE's rows on in their order keeps it.
 */
import assert from 'node:assert/strict';
import { insertEvents } from '../support/db.js';
import { expectTranslation } from '../support/translation.js';
import { LOGS_ALL_SQL } from '../../seeds/queries.js';

const P = 'sqltest-cte-order';
const at = (minutesAgo: number) => new Date(Math.floor(Date.now() / 60_000) * 60_000 - minutesAgo * 60_000).toISOString();
const ordered = (sql: string, cte: string) =>
  new RegExp(`"${cte}" AS \\([^]*?ORDER BY "t\\d+"\\."timestamp" DESC\\)`).test(
    sql.split(/\n(?="[a-z_]+" AS \()/).find((part) => part.includes(`"${cte}" AS (`)) ?? '',
  );
/** The rows of `select event_message …`, in this order. */
const rows = (...messages: string[]) => messages.map((event_message) => ({ event_message }));
const run = (sql: string) => expectTranslation(LOGS_ALL_SQL, { params: { project: P }, sandboxSql: sql });

describe('ORDER BY of endpoint CTEs', () => {
  before(() =>
    insertEvents(
      'cloudflare.logs.prod',
      [3, 1, 2].map((m) => ({
        project: P,
        timestamp: at(m),
        event_message: `m${m}`,
        metadata: { request: { method: m === 1 ? 'POST' : 'GET' } },
      })),
    ),
  );

  it('when the reader sorts its own rows, then the CTE order is dropped and the rows come in the reader order', async () => {
    const t = await run('select event_message from edge_logs order by timestamp asc').toReturn(rows('m3', 'm2', 'm1'));
    assert.equal(ordered(t.sql, 'edge_logs'), false, t.sql);
  });

  it('when the reader aggregates, then the CTE order is dropped', async () => {
    const t = await run('select count(*) as n, max(event_message) as last from edge_logs').toReturn([{ n: 3, last: 'm3' }]);
    assert.equal(ordered(t.sql, 'edge_logs'), false, t.sql);
  });

  it('when the reader passes rows on in the CTE order (no ORDER BY, a LIMIT), then the CTE keeps its order: newest first', async () => {
    const t = await run('select event_message from edge_logs limit 2').toReturn(rows('m1', 'm2'));
    assert.equal(ordered(t.sql, 'edge_logs'), true, t.sql);
    const all = await run('select event_message from edge_logs').toReturn(rows('m1', 'm2', 'm3'));
    assert.equal(ordered(all.sql, 'edge_logs'), true);
  });

  it('when an aggregate depends on input order, then the CTE keeps its order', async () => {
    const t = await run("select string_agg(event_message, ',') as s from edge_logs").toReturn([{ s: 'm1,m2,m3' }]);
    assert.equal(ordered(t.sql, 'edge_logs'), true, t.sql);
  });

  it('when a statistical aggregate reads it, then the CTE order is dropped; with string_agg beside it, the order is kept', async () => {
    const t = await run('select stddev(unix_seconds(timestamp)) as s from edge_logs').toReturn([{ s: 60 }]);
    assert.equal(ordered(t.sql, 'edge_logs'), false, t.sql);
    const both = await run("select stddev(unix_seconds(timestamp)) as s, string_agg(event_message, ',') as m from edge_logs").toReturn([
      { s: 60, m: 'm1,m2,m3' },
    ]);
    assert.equal(ordered(both.sql, 'edge_logs'), true, both.sql);
  });

  it('when a CTE of the caller reads it, then the CTE keeps its order', async () => {
    const t = await run('with mine as (select event_message from edge_logs) select event_message from mine').toReturn(
      rows('m1', 'm2', 'm3'),
    );
    assert.equal(ordered(t.sql, 'edge_logs'), true, t.sql);
  });
});
