/** Constructs whose SQL only Postgres can judge: each runs once on real rows. */
import { insertEvents } from '../support/db.js';
import { expectTranslation, inLastHour } from '../support/translation.js';

const P = 'sqltest-coverage';
const T = inLastHour(0);
const source = '`postgREST.logs.prod`';

describe('more constructs on Postgres', () => {
  before(() =>
    insertEvents('postgREST.logs.prod', [
      {
        project: P,
        timestamp: T,
        event_message: 'cov',
        level: 'warn',
        attempts: 3,
        ratio: 0.5,
        tags: ['x', 'y'],
        codes: [200, 404],
        req: { method: 'GET', size: 12 },
        metadata: { host: 'h1' },
      },
    ]),
  );
  const where = `where t.project = '${P}'`;

  it('when top-level fields other than metadata are read (stored in body), then they are typed', async () => {
    await expectTranslation(
      `select t.level, t.attempts + 1 as a, t.ratio * 2 as r, req.method, req.size from ${source} t cross join unnest(t.req) as req ${where}`,
    ).toReturn([{ level: 'warn', a: 4, r: 1, method: 'GET', size: 12 }]);
  });

  it('when a repeated scalar is unnested, then its elements have the schema type', async () => {
    await expectTranslation(
      `select sum(c) as total, string_agg(tag, '' order by tag) as tags from ${source} t cross join unnest(t.codes) as c cross join unnest(t.tags) as tag ${where}`,
    ).toReturn([{ total: 1208, tags: 'xxyy' }]);
  });

  it('when IN (subquery), EXISTS and LIMIT @n are used, then they filter and cap', async () => {
    await expectTranslation(
      `select event_message from ${source} t ${where} and t.level in (select 'warn') and exists (select 1) limit @n`,
      { params: { n: '5' } },
    ).toReturn([{ event_message: 'cov' }]);
  });

  it('when INTERVAL takes a parameter and SAFE_CAST a parameter, then both convert', async () => {
    await expectTranslation(
      `select timestamp_add(timestamp '2026-01-01', interval @h hour) as a, safe_cast(@x as int64) as b, safe_cast(@y as int64) as c`,
      { params: { h: '2', x: '12', y: 'nope' } },
    ).toReturn([{ a: '2026-01-01T02:00:00.000Z', b: 12, c: null }]);
  });

  it('when records are aggregated, selected with *, or read with json_value, then JSON comes back in the stored shape', async () => {
    await expectTranslation(
      `select array_agg(m) as ms, json_value(t.req, '$[0].method') as method from ${source} t cross join unnest(t.metadata) as m ${where} group by 2`,
    ).toReturn([{ ms: [{ host: 'h1' }], method: 'GET' }]);
    await expectTranslation(`select * except (id, timestamp, project) from ${source} t ${where}`).toReturn([
      {
        event_message: 'cov',
        metadata: [{ host: 'h1' }],
        level: 'warn',
        attempts: 3,
        ratio: 0.5,
        tags: ['x', 'y'],
        codes: [200, 404],
        req: [{ method: 'GET', size: 12 }],
        identifier: null,
      },
    ]);
  });

  it('when formatting in another zone and casting DATETIME to STRING, then wall clocks are right', async () => {
    await expectTranslation(
      `select format_timestamp('%H:%M', timestamp '2026-01-01 12:00:00', 'Asia/Kolkata') as a, cast(datetime '2026-01-01 10:30:00.25' as string) as b`,
    ).toReturn([{ a: '17:30', b: '2026-01-01 10:30:00.25' }]);
  });
});
