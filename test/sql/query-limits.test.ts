/**
 * The limits on CTEs and UNION operands of one query text (src/inputLimits.ts MAX_SQL_CTES,
 * MAX_SQL_UNION_SELECTS): 3,000 SELECTs joined by UNION ALL or 3,000 chained CTEs overflowed the
 * translator's stack and answered 500 (issue 25, finding 5), and a 1,000-CTE chain planned for
 * minutes in Postgres, past any cancel. At the limit they still run; past it, 400 naming the limit.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { SqlLimitError } from '../../src/sql/index.js';
import { MAX_SQL_CTES, MAX_SQL_UNION_SELECTS } from '../../src/inputLimits.js';
import { testApp, type TestApp } from '../support/http.js';
import { expectTranslation } from '../support/translation.js';
import { chainedCtes, unionSelects } from '../support/hostile.js';

/** 1-based column of the `occurrence`-th (1-based) `needle` in `text`: where the parser points. */
function columnOf(text: string, needle: string, occurrence: number): number {
  let at = -1;
  for (let i = 0; i < occurrence; i++) at = text.indexOf(needle, at + 1);
  return at + 1;
}

describe('the limits on CTEs and UNION operands', () => {
  it(`when ${MAX_SQL_UNION_SELECTS} SELECTs are joined by UNION ALL, then every row comes back`, async () => {
    await expectTranslation(`select count(*) as n, sum(x) as s from (${unionSelects(MAX_SQL_UNION_SELECTS)})`).toReturn([
      { n: MAX_SQL_UNION_SELECTS, s: (MAX_SQL_UNION_SELECTS * (MAX_SQL_UNION_SELECTS - 1)) / 2 },
    ]);
  });

  it(`when a chain of ${MAX_SQL_CTES} CTEs each reads the one before, then it runs`, async () => {
    await expectTranslation(chainedCtes(MAX_SQL_CTES)).toReturn([{ x: 1 }]);
  });

  const nestedWith = `with a as (${chainedCtes(60)}), ${chainedCtes(41, 'd', 'select x from a').slice('with '.length)}`;
  for (const [what, sql, limit, at] of [
    [
      '3,000 SELECTs joined by UNION ALL',
      unionSelects(3_000),
      'more than 500 SELECTs joined by UNION in one query \\(the limit on UNION operands\\)',
      ['union', 500],
    ],
    [
      '501 SELECTs over two UNIONs',
      `select x from (${unionSelects(300)}) union all ${unionSelects(200)}`,
      'the limit on UNION operands',
      ['union', 499],
    ],
    ['3,000 chained CTEs', chainedCtes(3_000), 'more than 100 CTEs in one query \\(the limit on CTEs\\)', ['c100 as', 1]],
    ['101 CTEs over nested WITH clauses', nestedWith, 'the limit on CTEs', ['d39 as', 1]],
  ] as const) {
    it(`when ${what} are sent, then SqlLimitError naming the limit, at the word past it`, async () => {
      const column = columnOf(sql, at[0], at[1]);
      await expectTranslation(sql).toFail(SqlLimitError, new RegExp(`${limit}.*\\(line 1, column ${column}\\)`));
    });
  }

  describe('through HTTP', function () {
    this.timeout(20_000);
    let t: TestApp;
    before(async () => {
      t = await testApp();
    });

    for (const [what, sql, limit] of [
      ['3,000 UNION ALL selects', unionSelects(3_000), /the limit on UNION operands/],
      ['3,000 chained CTEs', chainedCtes(3_000), /the limit on CTEs/],
    ] as const) {
      it(`when ${what} are sent as a caller's sql, then 400 with the envelope`, async () => {
        // In a POST body: supertest's own server has Node's 16 KB head limit, not the service's.
        const res = await request(t.app)
          .post('/api/endpoints/query/logs.all')
          .send({ project: 'query-limits', sql })
          .set('X-API-KEY', t.keys.query);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.equal(res.body.error.code, 400);
        assert.match(res.body.error.message, limit);
      });
    }

    it('when an endpoint is created with 3,000 chained CTEs, then 422 naming the limit', async () => {
      const res = await request(t.app)
        .post('/api/endpoints')
        .set('X-API-KEY', t.keys.admin)
        .send({ name: `query-limits-${Date.now()}`, query: chainedCtes(3_000) });
      assert.ok(res.status === 400 || res.status === 422, `${res.status} ${JSON.stringify(res.body)}`);
      assert.match(JSON.stringify(res.body), /the limit on CTEs/);
    });
  });
});
