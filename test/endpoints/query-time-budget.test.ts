/**
 * The query-time budget per key over HTTP (docs/API.md, "Rate limits"), in-process (no
 * REDIS_URL): a key whose database time is spent gets 429 `queryTimeExhausted` with Retry-After
 * and the envelope, another key is not affected, cache hits are served and never charged, and the
 * limits set per key through PATCH /api/keys/:id and the CLI apply. The service's own limiter
 * runs on a clock of the test that moves one second at every reading, so every uncached query
 * "takes" exactly 1000 ms whatever the machine's load. The bucket itself (debt, refill, Redis) is
 * in query-time-bucket.test.ts.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { createApp } from '../../src/app.js';
import { generateKey } from '../../src/auth/keys.js';
import { runCli } from '../../src/cli.js';
import { createContext, type AppContext } from '../../src/context.js';
import { createHttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import { KeyLimiter } from '../../src/rateLimit/index.js';
import { testConfig, testDatabase } from '../support/db.js';

interface ErrorBody {
  error: { code: number; status: string; errors: Array<{ reason: string; domain: string }> };
}

describe('query-time budget per key', function () {
  this.timeout(60_000);
  const tag = `qt${Date.now().toString(36)}`;
  let ctx: AppContext;
  let limiter: KeyLimiter;
  let server: http.Server;
  let base: string;
  const admin = generateKey();
  let n = 0;

  before(async () => {
    const { url } = await testDatabase();
    // Defaults of this instance: 1 ms of query time per second, at most 1500 ms in hand: one
    // uncached query (1000 ms on the clock below) leaves 500, a second one leaves a debt of 500.
    const config = testConfig(url, { QUERY_TIME_PER_SECOND_MS: '1', QUERY_TIME_BURST_MS: '1500' });
    ctx = await createContext(config, createLogger('silent'));
    let clock = 0;
    limiter = KeyLimiter.open(config, ctx.logger, 'unused:', () => (clock += 1000));
    server = createHttpServer(await createApp({ ...ctx, limiter }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await ctx.keys.create('qt-admin', admin, ['admin'], { query_ms_per_second: 0 });
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await limiter.close();
    await ctx.close();
  });

  const get = (path: string, key: string) => fetch(base + path, { headers: { 'X-API-KEY': key } });
  /** A query no one has asked before: a cache miss, so it runs on the database. */
  const uncached = () => `/api/endpoints/query/usage.api-counts?interval=hourly&project=${tag}-${++n}`;
  const newKey = async (name: string, limits = {}) => {
    const key = generateKey();
    return { key, id: (await ctx.keys.create(name, key, ['query'], limits)).id };
  };

  it('when a key has spent its query time, then its uncached queries get 429 with Retry-After and the envelope; another key is not affected', async () => {
    const { key } = await newKey('qt-spender');
    const first = uncached();
    assert.equal((await get(first, key)).status, 200);
    assert.equal((await get(uncached(), key)).status, 200, 'still 500 ms in hand');
    const refused = await get(uncached(), key);
    assert.equal(refused.status, 429);
    // A debt of about 500 ms at 1 ms per second: some 500 s until the balance is positive again.
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter > 400 && retryAfter < 600, `Retry-After ${retryAfter}`);
    const body = (await refused.json()) as ErrorBody;
    assert.equal(body.error.code, 429);
    assert.equal(body.error.status, 'RESOURCE_EXHAUSTED');
    assert.equal(body.error.errors[0].reason, 'queryTimeExhausted');
    assert.equal(body.error.errors[0].domain, 'limits');
    // Its cached answers are still served.
    const hit = await get(first, key);
    assert.equal(hit.status, 200);
    assert.equal(hit.headers.get('x-cache'), 'HIT');
    // Another key has its own budget.
    const other = await newKey('qt-other');
    assert.equal((await get(uncached(), other.key)).status, 200);
  });

  it('when a key is served from the cache, then that is never charged to its query time', async () => {
    const path = uncached();
    assert.equal((await get(path, admin)).status, 200); // cached by the admin key (no budget)
    const { key } = await newKey('qt-cached');
    // Charged, these would be 1000 ms each on this clock: 20 times the burst.
    for (let i = 0; i < 30; i++) {
      const res = await get(path, key);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-cache'), 'HIT');
    }
    assert.equal((await get(uncached(), key)).status, 200);
    assert.equal((await get(uncached(), key)).status, 200);
    assert.equal((await get(uncached(), key)).status, 429, 'the two uncached queries were charged');
  });

  it('when the budget fields of a key are set through PATCH /api/keys/:id, then they apply at once; bad values are 422', async () => {
    const headers = { 'X-API-KEY': admin, 'Content-Type': 'application/json' };
    const patch = (id: string, body: unknown) => fetch(`${base}/api/keys/${id}`, { method: 'PATCH', headers, body: JSON.stringify(body) });
    const { key, id } = await newKey('qt-patched');
    await get(uncached(), key);
    await get(uncached(), key);
    assert.equal((await get(uncached(), key)).status, 429);

    // A bigger refill: the debt is paid back within one reading of this clock.
    let res = await patch(id, { query_ms_per_second: 1000, query_ms_burst: 5000 });
    assert.equal(res.status, 200);
    const record = (await res.json()) as Record<string, unknown>;
    assert.equal(record.query_ms_per_second, 1000);
    assert.equal(record.query_ms_burst, 5000);
    assert.equal(record.max_concurrent_queries, null);
    assert.equal((await get(uncached(), key)).status, 200);

    // 0: no budget for this key.
    res = await patch(id, { query_ms_per_second: 1, query_ms_burst: 0 });
    assert.equal(res.status, 200);
    for (let i = 0; i < 5; i++) assert.equal((await get(uncached(), key)).status, 200);

    // null: back to the configured default (1 ms/s, at most 1500 ms): the third query is refused.
    res = await patch(id, { query_ms_per_second: null, query_ms_burst: null });
    assert.equal(((await res.json()) as Record<string, unknown>).query_ms_burst, null);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await get(uncached(), key)).status);
    assert.equal(statuses[2], 429, statuses.join(','));

    for (const bad of [{ query_ms_per_second: -1 }, { query_ms_burst: 2.5 }, { query_ms_burst: '100' }, { query_ms: 5 }]) {
      const r = await patch(id, bad);
      assert.equal(r.status, 422, JSON.stringify(bad));
      const body = (await r.json()) as ErrorBody & { error: { errors: Array<{ location: string }> } };
      assert.equal(body.error.code, 422);
      assert.equal(body.error.errors[0].location, Object.keys(bad)[0]);
    }
    const listed = (await (await get('/api/keys', admin)).json()) as Array<Record<string, unknown>>;
    assert.equal(listed.find((k) => k.id === id)?.query_ms_per_second, null);
  });

  it('when the CLI sets a key\'s query time, then it is stored; "default" resets it', async () => {
    const { id } = await newKey('qt-cli');
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), env: { DATABASE_URL: ctx.db.url, LOG_LEVEL: 'silent' } };
    assert.equal(await runCli(['keys', 'limits', id, '--query-ms', '2000', '--query-ms-burst', '30000'], io), 0);
    let printed = JSON.parse(out.join('\n'));
    assert.equal(printed.query_ms_per_second, 2000);
    assert.equal(printed.query_ms_burst, 30000);
    out.length = 0;
    assert.equal(await runCli(['keys', 'limits', id, '--query-ms-burst', 'default'], io), 0);
    printed = JSON.parse(out.join('\n'));
    assert.equal(printed.query_ms_per_second, 2000);
    assert.equal(printed.query_ms_burst, null);
    assert.equal(await runCli(['keys', 'limits', id, '--query-ms', 'lots'], io), 2);
    assert.match(err.join('\n'), /--query-ms must be a whole number/);
  });
});
