/**
 * What BigQuery refuses for its types is refused by the translator, with a position, before
 * Postgres could fail at run time; what BigQuery accepts still runs.
 */
import { SqlNameError, SqlSyntaxError } from '../../src/sql/index.js';
import { insertEvents } from '../support/db.js';
import { expectTranslation } from '../support/translation.js';

const P = 'sqltest-type-rules';

describe('type rules', () => {
  before(() =>
    insertEvents('cloudflare.logs.prod', [
      { project: P, event_message: 'a', metadata: { request: { path: '/a', method: 'GET' }, response: { status_code: 500 } } },
      { project: P, event_message: 'b', metadata: { request: { path: '/b', method: 'GET' }, response: { status_code: 200 } } },
    ]),
  );

  it('when a TIMESTAMP is cast to INT64, then a syntax error names the cast (BigQuery has no such cast)', async () => {
    await expectTranslation('select cast(timestamp as int64) as x from `cloudflare.logs.prod`').toFail(
      SqlSyntaxError,
      /invalid cast from TIMESTAMP to INT64 \(line 1, column 8\)/,
    );
    await expectTranslation('select cast(true as float64) as x').toFail(SqlSyntaxError, /invalid cast from BOOL to FLOAT64/);
  });

  it('when casts BigQuery allows are written, then they run', async () => {
    await expectTranslation(
      "select cast(true as int64) as a, cast(2.5 as string) as b, cast(timestamp('2026-01-02 03:04:05') as date) as c, unix_micros(timestamp('1970-01-01 00:00:01')) as d",
    ).toReturn([{ a: 1, b: '2.5', c: '2026-01-02', d: 1000000 }]);
    await expectTranslation(
      'select cast(n as bool) as a, cast(n - 3 as bool) as b, safe_cast(n * 5000000000 as bool) as c from (select count(*) + 3 as n from `cloudflare.logs.prod` where false)',
    ).toReturn([{ a: true, b: false, c: true }]);
  });

  it('when a STRING field is compared with a number, then a syntax error names the operator and types', async () => {
    await expectTranslation(
      'select count(*) as n from `cloudflare.logs.prod` t cross join unnest(t.metadata) m cross join unnest(m.request) r where r.path > 5',
    ).toFail(SqlSyntaxError, /no operator > for STRING and INT64; CAST one side \(line 1, column 121\)/);
  });

  it('when BETWEEN, IN or CASE x WHEN compare a STRING field with numbers, then the same syntax error as =', async () => {
    const from = 'from `cloudflare.logs.prod` t cross join unnest(t.metadata) m cross join unnest(m.request) r';
    await expectTranslation(`select count(*) as n ${from} where r.path between 1 and 5`).toFail(
      SqlSyntaxError,
      /no operator BETWEEN for STRING and INT64/,
    );
    await expectTranslation(`select count(*) as n ${from} where r.path in (1, 2)`).toFail(
      SqlSyntaxError,
      /no operator IN for STRING and INT64/,
    );
    await expectTranslation(`select case r.path when 1 then 'a' end as x ${from}`).toFail(
      SqlSyntaxError,
      /no operator = for STRING and INT64/,
    );
  });

  it('when a number field meets a numeric string literal or a parameter, then they compare as numbers', async () => {
    await expectTranslation(
      `select t.event_message from \`cloudflare.logs.prod\` t cross join unnest(t.metadata) m cross join unnest(m.response) r where t.project = '${P}' and r.status_code = '500' and r.status_code >= @min`,
      { params: { min: '400' } },
    ).toReturn([{ event_message: 'a' }]);
  });

  it("when a default source's field is known to be a number, then it compares as one though its sample holds placeholder text", async () => {
    await insertEvents('gotrue.logs.prod', [
      { project: P, event_message: 'ok', metadata: { status: 200, path: '/token' } },
      { project: P, event_message: 'denied', metadata: { status: 403, path: '/token' } },
    ]);
    await expectTranslation(
      `select t.event_message from \`gotrue.logs.prod\` t cross join unnest(t.metadata) m where t.project = '${P}' and m.status >= 400`,
    ).toReturn([{ event_message: 'denied' }]);
  });

  it('when UNION has no ALL or DISTINCT, then it is UNION DISTINCT', async () => {
    await expectTranslation(`select x from (select 1 as x union select 1 union select 2) order by x`).toReturn([{ x: 1 }, { x: 2 }]);
  });

  it('when a function name is backticked, then the function table judges it', async () => {
    await expectTranslation('select `upper`("a") as a').toReturn([{ a: 'A' }]);
    await expectTranslation('select `some.function`(1) as x').toFail(SqlNameError, /unknown function some\.function/);
  });
});
