import assert from 'node:assert/strict';
import request from 'supertest';
import type { Listener } from '../../src/http/server.js';
import { createApp } from '../../src/app.js';
import { createContext, type AppContext } from '../../src/context.js';
import { generateKey } from '../../src/auth/keys.js';
import { createLogger } from '../../src/logger.js';
import { insertEvents, testConfig, testDatabase } from '../support/db.js';

describe('query time limit', () => {
  const tag = `slow${Date.now().toString(36)}`;
  let ctx: AppContext;
  let app: Listener;
  const key = generateKey();
  // Three cross joins of 400 rows: 25.6 M combinations, far past a 300 ms limit.
  const slowSql = 'select count(*) as n from edge_logs a cross join edge_logs b cross join edge_logs c cross join edge_logs d';

  before(async () => {
    const { url } = await testDatabase();
    ctx = await createContext(
      testConfig(url, { QUERY_TIMEOUT_MS: '300', DB_POOL_SIZE: '3', DB_CONNECT_TIMEOUT_MS: '10000' }),
      createLogger('silent'),
    );
    app = await createApp(ctx);
    await ctx.keys.create('timeout-test', key, ['query']);
    await insertEvents(
      'cloudflare.logs.prod',
      Array.from({ length: 400 }, (_, i) => ({ id: `${tag}-${i}`, project: tag, event_message: 'x' })),
    );
  });
  after(() => ctx.close());

  it('when a query runs past QUERY_TIMEOUT_MS, then 504 with the envelope, its backend is cancelled, and the pool is not exhausted', async () => {
    for (let i = 0; i < 6; i++) {
      // Twice the pool size: a leaked connection would make later calls wait for one, then answer 503, not
      // 504 (no wall-clock bound here: a loaded machine stretches every call, a leak changes the status).
      const res = await request(app).get('/api/endpoints/query/logs.all').query({ project: tag, sql: slowSql }).set('X-API-KEY', key);
      assert.equal(res.status, 504, res.text);
      assert.equal(res.body.error.status, 'DEADLINE_EXCEEDED');
      assert.ok(!res.text.includes('cross join'), 'no SQL in the error');
    }
    const { rows } = await ctx.db.pool.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query ILIKE '%cross join%' AND pid <> pg_backend_pid()`,
    );
    assert.equal(rows[0].n, 0, 'no cancelled query is still running');
    const ok = await request(app)
      .get('/api/endpoints/query/logs.all')
      .query({ project: tag, sql: 'select count(*) as n from edge_logs' })
      .set('X-API-KEY', key);
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { result: [{ n: 400 }] });
  });
});
