/**
 * `count(x)` of a column that is never NULL is translated as `count(*)`
 * (src/sql/postgres/countRows.ts), so a report that counts `t.id` can be answered from a covering
 * index; where x may be NULL (an outer join's nullable side, a JSON leaf) the count stays as it is.
 */
import assert from 'node:assert/strict';
import { insertEvents } from '../support/db.js';
import { expectTranslation } from '../support/translation.js';
import { LOGS_ALL_SQL } from '../../seeds/queries.js';

const P = `sqltest-count-rows-${Date.now().toString(36)}`;
const at = (minutesAgo: number) => new Date(Math.floor(Date.now() / 60_000) * 60_000 - minutesAgo * 60_000).toISOString();
const sandboxed = (sql: string) => expectTranslation(LOGS_ALL_SQL, { params: { project: P }, sandboxSql: sql });
const W = 'with w as (select t.id, t.timestamp, t.metadata from `cloudflare.logs.prod` t where t.project = @project)';
const direct = (sql: string) => expectTranslation(`${W} ${sql}`, { params: { project: P } });
const counts = (sql: string) => [...sql.matchAll(/count\(([^()]*)\)/g)].map((m) => m[1]);

describe('count of a NOT NULL column', () => {
  before(() =>
    insertEvents('cloudflare.logs.prod', [
      { project: P, timestamp: at(1), event_message: 'a', metadata: { request: { path: '/a', headers: { x: '1' } } } },
      { project: P, timestamp: at(2), event_message: 'b', metadata: { request: { path: '/b', headers: { x: '1' } } } },
      { project: P, timestamp: at(3), event_message: 'c', metadata: { request: { headers: { x: '1' } } } },
    ]),
  );

  it("when Studio's report counts t.id through logs.all, then it counts rows", async () => {
    const t = await sandboxed(
      'select count(t.id) as count from edge_logs t cross join unnest(metadata) as m cross join unnest(m.request) as request cross join unnest(request.headers) as headers',
    ).toReturn([{ count: 3 }]);
    assert.deepEqual(counts(t.sql), ['*'], t.sql);
  });

  it('when the count is of id or timestamp through a CTE and a grouped query, then it counts rows; DISTINCT stays', async () => {
    const t = await direct(
      'select count(w.id) as a, count(w.timestamp) as b, count(distinct w.id) as c, countif(w.id is not null) as d from w cross join unnest(w.metadata) as m',
    ).toReturn([{ a: 3, b: 3, c: 3, d: 3 }]);
    // countif is count(*) FILTER (…) already.
    assert.deepEqual(counts(t.sql), ['*', '*', 'DISTINCT "t1"."id"', '*'], t.sql);
  });

  it('when the column is a JSON leaf, then the count still skips its NULLs', async () => {
    const t = await direct(
      'select count(r.path) as n from w cross join unnest(w.metadata) as m cross join unnest(m.request) as r',
    ).toReturn([{ n: 2 }]);
    assert.ok(!counts(t.sql).includes('*'), t.sql);
  });

  it("when the counted rows are an outer join's nullable side, then its NULLs are not counted", async () => {
    const t = await direct(
      `, p as (select w.id, r.path from w cross join unnest(w.metadata) as m cross join unnest(m.request) as r) select b, count(p.id) as n from unnest(['/a', '/b', '/z']) as b left join p on p.path = b group by b order by b`,
    ).toReturn([
      { b: '/a', n: 1 },
      { b: '/b', n: 1 },
      { b: '/z', n: 0 },
    ]);
    assert.ok(!counts(t.sql).includes('*'), t.sql);
  });
});
