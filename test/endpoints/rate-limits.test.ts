/**
 * Limits per API key (docs/API.md, "Rate limits"), in-process (no REDIS_URL): the request rate
 * (cache hits on the pre-Express fast path included) and the concurrent uncached queries, 429
 * with Retry-After and the envelope; limits set per key through /api/keys and the CLI. The
 * limits shared through Redis by several processes are in test/hardening/processes.test.ts; the
 * query-time budget in query-time-budget.test.ts and query-time-bucket.test.ts.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { createApp } from '../../src/app.js';
import { generateKey } from '../../src/auth/keys.js';
import { createContext, type AppContext } from '../../src/context.js';
import { createHttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import { runCli } from '../../src/cli.js';
import { insertEvents, testConfig, testDatabase } from '../support/db.js';
import { listenLocally } from '../support/net.js';

describe('rate limits per key', function () {
  this.timeout(300_000);
  const tag = `rl${Date.now().toString(36)}`;
  let ctx: AppContext;
  let server: http.Server;
  let base: string;
  const admin = generateKey();
  const limited = generateKey();
  const other = generateKey();
  let limitedId: string;
  // The clock of the request windows (and key lookups): moved by the tests, not slept through.
  let clock = Date.now();
  // Three cross joins of 300 rows: 8.1 M combinations, a second or so: long enough to overlap.
  const slowSql = 'select count(*) as n from edge_logs a cross join edge_logs b cross join edge_logs c';

  before(async () => {
    const { url } = await testDatabase();
    // Defaults of this instance: 5 requests per second with bursts of 8, a hard cap of one query at a time
    // and one more waiting.
    ctx = await createContext(
      // A time limit that a query waiting behind another never reaches, however loaded the machine.
      testConfig(url, {
        RATE_LIMIT_PER_SECOND: '5',
        RATE_LIMIT_BURST: '8',
        MAX_CONCURRENT_QUERIES: '1',
        QUERY_QUEUE_LIMIT: '1',
        QUERY_TIMEOUT_MS: '300000',
      }),
      createLogger('silent'),
      { now: () => clock },
    );
    server = createHttpServer(await createApp(ctx));
    ({ base } = await listenLocally(server));
    await ctx.keys.create('rl-admin', admin, ['admin'], { rate_limit_per_second: 0 });
    limitedId = (await ctx.keys.create('rl-limited', limited, ['query'])).id;
    await ctx.keys.create('rl-other', other, ['query']);
    await insertEvents(
      'cloudflare.logs.prod',
      Array.from({ length: 300 }, (_, i) => ({ id: `${tag}-${i}`, project: tag, event_message: 'x' })),
    );
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await ctx.close();
  });

  const get = (path: string, key: string) => fetch(base + path, { headers: { 'X-API-KEY': key } });

  it('when a key sends more than its burst, then 429 with Retry-After and the envelope, cache hits included; another key is not affected', async () => {
    const path = '/api/endpoints/query/usage.api-counts?interval=hourly&project=' + tag;
    // Warm the cache first (with the admin key: no limit), so every call below is a fast-path hit.
    assert.equal((await get(path, admin)).status, 200);
    assert.equal((await get(path, admin)).headers.get('x-cache'), 'HIT');
    const answers = await Promise.all(Array.from({ length: 20 }, () => get(path, limited)));
    const ok = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status === 429);
    // The clock stands still: the 20 calls fall in one window however long they take, and the burst (8) is all it allows.
    const statuses = `statuses: ${answers.map((r) => r.status).join(',')}`;
    assert.equal(ok.length, 8, statuses);
    assert.equal(refused.length, 12, statuses);
    for (const r of ok) assert.equal(r.headers.get('x-cache'), 'HIT');
    // Until the one-second window ends (the burst allowance's own lasts ten).
    assert.equal(refused[0].headers.get('retry-after'), '1');
    const body = (await refused[0].json()) as { error: { code: number; status: string; errors: Array<{ reason: string }> } };
    assert.equal(body.error.code, 429);
    assert.equal(body.error.status, 'RESOURCE_EXHAUSTED');
    assert.equal(body.error.errors[0].reason, 'rateLimited');
    // The other key has its own budget.
    assert.equal((await get(path, other)).status, 200);
    // A second later, the rate refills: the limited key is served again, for its rate (5) and no more.
    clock += 1000;
    const next = await Promise.all(Array.from({ length: 6 }, () => get(path, limited)));
    assert.deepEqual(next.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 429]);
  });

  it('when a key runs more uncached queries than its cap, then the extra one waits and is answered, and only one past its queue gets 429; cached answers are not held', async () => {
    const key = generateKey();
    await ctx.keys.create('rl-queries', key, ['query'], { rate_limit_per_second: 0 });
    const slow = `/api/endpoints/query/logs.all?project=${tag}&sql=${encodeURIComponent(slowSql)}`;
    const answers = await Promise.all(Array.from({ length: 3 }, () => get(slow, key)));
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 200, 429], `statuses ${statuses.join(',')}`);
    const refused = answers.find((r) => r.status === 429)!;
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.equal(((await refused.json()) as { error: { errors: Array<{ reason: string }> } }).error.errors[0].reason, 'tooManyQueries');
    // One at a time is within the cap, and the slot is freed after each.
    assert.equal((await get(slow, key)).status, 200);
  });

  it('when limits are set on a key through PATCH /api/keys/:id, then they apply; bad values are 422', async () => {
    const headers = { 'X-API-KEY': admin, 'Content-Type': 'application/json' };
    const patch = (id: string, body: unknown) => fetch(`${base}/api/keys/${id}`, { method: 'PATCH', headers, body: JSON.stringify(body) });
    const res = await patch(limitedId, { rate_limit_per_second: 0, max_concurrent_queries: 3 });
    assert.equal(res.status, 200);
    const record = (await res.json()) as Record<string, unknown>;
    assert.equal(record.rate_limit_per_second, 0);
    assert.equal(record.max_concurrent_queries, 3);
    assert.equal(record.rate_limit_burst, null);
    const path = '/api/endpoints/query/usage.api-counts?interval=hourly&project=' + tag;
    const answers = await Promise.all(Array.from({ length: 30 }, () => get(path, limited)));
    assert.deepEqual([...new Set(answers.map((r) => r.status))], [200], 'no limit on the rate now');
    for (const bad of [{ rate_limit_per_second: -1 }, { rate_limit_burst: 1.5 }, { max_concurrent_queries: '3' }, { scopes: ['admin'] }]) {
      const r = await patch(limitedId, bad);
      assert.equal(r.status, 422, JSON.stringify(bad));
      assert.equal(((await r.json()) as { error: { code: number } }).error.code, 422);
    }
    assert.equal((await patch('00000000-0000-0000-0000-000000000000', { rate_limit_burst: 5 })).status, 404);
    const listed = (await (await get('/api/keys', admin)).json()) as Array<Record<string, unknown>>;
    assert.equal(listed.find((k) => k.id === limitedId)?.max_concurrent_queries, 3);
  });

  it('when the CLI sets a key\'s limits, then they are stored; "default" resets one', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), env: { DATABASE_URL: ctx.db.url, LOG_LEVEL: 'silent' } };
    assert.equal(await runCli(['keys', 'limits', limitedId, '--rate-limit', '50', '--burst', 'default', '--max-queries', '2'], io), 0);
    const printed = JSON.parse(out.join('\n'));
    assert.equal(printed.rate_limit_per_second, 50);
    assert.equal(printed.rate_limit_burst, null);
    assert.equal(printed.max_concurrent_queries, 2);
    assert.equal(await runCli(['keys', 'limits', limitedId, '--rate-limit', 'fast'], io), 2);
    assert.match(err.join('\n'), /--rate-limit must be a whole number/);
  });
  it('when a public endpoint is called without a key past the burst, then 429 for that address; keys are counted apart', async () => {
    const created = await fetch(`${base}/api/endpoints`, {
      method: 'POST',
      headers: { 'X-API-KEY': admin, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: `${tag}.public`, query: 'select 1 as one', enable_auth: false, cache_duration_seconds: 600 }),
    });
    assert.equal(created.status, 201);
    const path = `/api/endpoints/query/${tag}.public`;
    const answers = await Promise.all(Array.from({ length: 16 }, () => fetch(base + path)));
    const statuses = answers.map((r) => r.status);
    assert.ok(statuses.filter((s) => s === 200).length >= 8, `the burst of an address (RATE_LIMIT_BURST 8): ${statuses.join(',')}`);
    const refused = answers.find((r) => r.status === 429);
    assert.ok(refused, statuses.join(','));
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal(refused.headers.get('access-control-allow-origin'), '*', 'a page can read the refusal');
    // A caller with a key is counted under its key, not its address.
    assert.equal((await get(path, other)).status, 200);
  });
});
