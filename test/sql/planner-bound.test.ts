/**
 * The planner bound (src/sql/postgres/inlinedSize.ts): chains of CTEs or subqueries in FROM
 * whose inlined expression doubles per level answer 400 naming the limit before anything reaches
 * Postgres, whose planner cannot be cancelled (issue 25, finding 1); modest chains still run.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { SqlLimitError } from '../../src/sql/index.js';
import { MAX_INLINED_NODES } from '../../src/sql/postgres/inlinedSize.js';
import { testApp, type TestApp } from '../support/http.js';
import { expectTranslation } from '../support/translation.js';
import { doublingCteChain, doublingSubqueryChain } from '../support/hostile.js';

const ENDPOINT = 'with base as (select 1 as x) select x from base';

describe('the planner bound on inlined expressions', () => {
  it('when a CTE chain doubles an expression 10 times, then it runs and answers the length', async () => {
    await expectTranslation(ENDPOINT, { sandboxSql: doublingCteChain(10) }).toReturn([{ n: 1024 }]);
  });

  it('when nested subqueries in FROM double it 10 times, then it runs too', async () => {
    await expectTranslation(ENDPOINT, { sandboxSql: doublingSubqueryChain(10) }).toReturn([{ n: 1024 }]);
  });

  for (const [what, sql] of [
    ['a 23-level CTE chain', doublingCteChain(23)],
    ['a 30-level CTE chain', doublingCteChain(30)],
    ['30 nested subqueries in FROM', doublingSubqueryChain(30)],
    ['a chain in the endpoint text itself', undefined],
  ] as const) {
    it(`when ${what} would plan past the bound, then SqlLimitError naming the limit`, async () => {
      const options = sql === undefined ? {} : { sandboxSql: sql };
      await expectTranslation(sql === undefined ? doublingCteChain(20) : ENDPOINT, options).toFail(
        SqlLimitError,
        new RegExp(`more than ${MAX_INLINED_NODES} expression nodes .*limit on inlined expression size`),
      );
    });
  }

  describe('through HTTP', function () {
    this.timeout(20_000);
    let t: TestApp;
    before(async () => {
      t = await testApp();
    });

    for (const levels of [23, 30]) {
      it(`when the ${levels}-level chain is sent as sql, then 400 at once and no backend is left running`, async () => {
        const started = Date.now();
        const res = await request(t.app)
          .get('/api/endpoints/query/logs.all')
          .query({ project: 'planner-bound', sql: doublingCteChain(levels) })
          .set('X-API-KEY', t.keys.query);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.match(res.body.error.message, /limit on inlined expression size/);
        assert.ok(Date.now() - started < 5_000, 'answered without planning');
        const { rows } = await t.context.db.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()",
        );
        assert.equal(rows[0].n, 0);
      });
    }
  });
});
