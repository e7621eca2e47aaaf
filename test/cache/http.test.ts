import assert from 'node:assert/strict';
import type { Listener } from '../../src/http/server.js';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import { generateKey } from '../../src/auth/keys.js';
import { createContext, type AppContext } from '../../src/context.js';
import { normaliseEvents } from '../../src/ingest/normalise.js';
import { createLogger } from '../../src/logger.js';
import { createEmptyDatabase, testConfig } from '../support/db.js';
import { OwnRedis, cacheEvents, withRawRedis } from './support.js';

/**
 * The result cache through the HTTP route, on its own database and its own redis-server (so no
 * other test run's warmer sees these keys).
 */
describe('result cache over HTTP (Redis)', function () {
  this.timeout(60_000);
  const tag = `cache${Date.now().toString(36)}`;
  const host = `${tag}.supabase.co`;
  const query = { interval: 'hourly', project: `^https://${tag}\\.` };
  let redis: OwnRedis;
  let ctx: AppContext;
  let app: Listener;
  const keys = { admin: generateKey(), query: generateKey() };

  async function insertRequests(paths: string[]): Promise<void> {
    const source = await ctx.sources.get('cloudflare.logs.prod');
    const now = Date.now();
    const events = paths.map((path, i) => ({
      timestamp: new Date(now - 5 * 60_000 - i * 1000).toISOString(),
      project: tag,
      event_message: `GET | 200 | ${path}`,
      metadata: { request: { path, url: `https://${host}${path}`, host, method: 'GET' }, response: { status_code: 200 } },
    }));
    const batch = normaliseEvents(events, { nowMs: now, retentionDays: source.retention_days });
    assert.deepEqual(batch.errors, []);
    await ctx.writer.write(source, batch.rows, batch.fields);
  }

  const usage = (extra: Record<string, string> = {}) =>
    request(app)
      .get('/api/endpoints/query/usage.api-counts')
      .query({ ...query, ...extra })
      .set('X-API-KEY', keys.query);

  before(async () => {
    redis = await OwnRedis.start();
    const { url } = await createEmptyDatabase('lq_cache_http');
    ctx = await createContext(testConfig(url, { REDIS_URL: redis.url }), createLogger('silent'));
    await ctx.keys.create('cache-admin', keys.admin, ['admin']);
    await ctx.keys.create('cache-query', keys.query, ['query']);
    app = await createApp(ctx);
    await insertRequests(['/rest/v1/a', '/auth/v1/token']);
  });
  after(async () => {
    await ctx?.close();
    await redis?.kill();
  });

  it('/ready says the cache answers', async () => {
    const res = await request(app).get('/ready').expect(200);
    assert.equal(res.body.cache, true);
  });

  it('when the same call is made twice, then the second is an X-Cache HIT with the identical body', async () => {
    const first = await usage().expect(200);
    const second = await usage().expect(200);
    assert.equal(first.headers['x-cache'], 'MISS');
    assert.equal(second.headers['x-cache'], 'HIT');
    assert.equal(second.text, first.text);
    assert.match(second.headers['content-type'], /^application\/json; charset=utf-8/);
    assert.equal(JSON.parse(second.text).result.length, 1);
  });

  it('when new events arrive, then a cached answer does not change', async () => {
    const before = await usage().expect(200);
    await insertRequests(['/rest/v1/b', '/storage/v1/c']);
    const after = await usage().expect(200);
    assert.equal(after.headers['x-cache'], 'HIT');
    assert.equal(after.text, before.text);
  });

  it('when an undeclared parameter is added, then it is the same cache entry', async () => {
    const plain = await usage().expect(200);
    await withRawRedis(async (raw) => {
      const entries = (await raw.keys('lq:ep:*')).length;
      const junk = await usage({ junk: String(Math.random()), utm_source: 'x' }).expect(200);
      assert.equal(junk.headers['x-cache'], 'HIT');
      assert.equal(junk.text, plain.text);
      assert.equal((await raw.keys('lq:ep:*')).length, entries);
    }, redis.url);
  });

  it('when a declared parameter differs or redaction is asked for, then it is another entry', async () => {
    const other = await usage({ interval: 'daily' }).expect(200);
    assert.equal(other.headers['x-cache'], 'MISS');
    const redacted = await usage().set('LF-ENDPOINT-REDACT-PII', 'true').expect(200);
    assert.equal(redacted.headers['x-cache'], 'MISS');
  });

  it('when the endpoint is changed (PATCH), then the next call is a MISS and sees the current rows', async () => {
    const cached = await usage().expect(200);
    assert.equal(cached.headers['x-cache'], 'HIT');
    await request(app).patch('/api/endpoints/usage.api-counts').set('X-API-KEY', keys.admin).send({ description: 'changed' }).expect(204);
    const fresh = await usage().expect(200);
    assert.equal(fresh.headers['x-cache'], 'MISS');
    assert.notEqual(fresh.text, cached.text, 'includes the events inserted after the first call');
    const [row] = JSON.parse(fresh.text).result;
    assert.equal(row.total_rest_requests, 2);
    assert.equal(row.total_storage_requests, 1);
    assert.equal((await usage().expect(200)).headers['x-cache'], 'HIT');
  });

  it('when the endpoint does not cache (logs.all), then X-Cache is BYPASS', async () => {
    const res = await request(app).get('/api/endpoints/query/logs.all').query({ project: tag }).set('X-API-KEY', keys.query).expect(200);
    assert.equal(res.headers['x-cache'], 'BYPASS');
  });

  it('when Redis is killed, then calls still answer 200 (MISS) promptly, and /ready says the cache is down', async () => {
    await redis.kill();
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      const res = await usage().expect(200);
      assert.equal(res.headers['x-cache'], 'MISS');
      assert.ok(performance.now() - started < 1000);
    }
    const ready = await request(app).get('/ready').expect(200);
    assert.equal(ready.body.cache, false);
    assert.ok((await cacheEvents(ctx.metrics, 'error')) >= 5);
  });
});
