import assert from 'node:assert/strict';
import { eventually, sleep } from '../support/wait.js';
import { OwnRedis, countingCompute, request, testCache, uniqueNamespace, type TestCache } from '../cache/support.js';

/**
 * Redis down or stalled never fails or stalls a request. These tests run their own redis-server
 * (never the shared one) and kill, freeze and restart it.
 */
describe('result cache when Redis is down or slow', function () {
  this.timeout(30_000);
  let redis: OwnRedis;
  let c: TestCache;

  beforeEach(async () => {
    redis = await OwnRedis.start();
    c = await testCache(redis.url, {}, { namespace: uniqueNamespace('outage') });
  });
  afterEach(async () => {
    redis.thaw();
    await c.cache.close();
    await redis.kill();
  });

  async function timedFetch(key: string, counter: ReturnType<typeof countingCompute>) {
    const started = performance.now();
    const outcome = await c.cache.fetch(request(key), counter.compute);
    return { ...outcome, ms: performance.now() - started };
  }

  it('when Redis is killed, then fetches answer computed bodies promptly as MISS; when it is back, HITs resume', async () => {
    const counter = countingCompute(undefined, 5);
    assert.equal((await timedFetch('ep:o:1:x', counter)).status, 'MISS');
    assert.equal((await timedFetch('ep:o:1:x', counter)).status, 'HIT');

    await redis.kill();
    const down = [];
    for (let i = 0; i < 20; i++) down.push(await timedFetch(i % 2 ? 'ep:o:1:x' : `ep:o:1:k${i}`, counter));
    for (const d of down) {
      assert.equal(d.status, 'MISS');
      assert.match(d.body, /^\{"result":/);
      assert.ok(d.ms < 1000, `${d.ms.toFixed(1)} ms`);
    }
    assert.ok(Math.max(...down.map((d) => d.ms)) < 200, `slowest ${Math.max(...down.map((d) => d.ms)).toFixed(1)} ms`);
    assert.ok((await c.events('error')) >= 20);
    assert.equal(await c.cache.ready(), false);

    await redis.restart();
    assert.ok(await eventually(async () => (await c.cache.ready()) === true, 5000), 'reconnected');
    const resumed = await eventually(async () => (await timedFetch('ep:o:1:after', counter)).status === 'HIT', 5000);
    assert.ok(resumed, 'HITs resume after Redis is back');
  });

  it('when Redis stalls (SIGSTOP), then fetches still answer promptly, and caching resumes when it continues', async () => {
    const counter = countingCompute(undefined, 5);
    await timedFetch('ep:p:1:x', counter);
    redis.freeze();
    const stalled = [];
    for (let i = 0; i < 10; i++) stalled.push(await timedFetch('ep:p:1:x', counter));
    for (const s of stalled) {
      assert.equal(s.status, 'MISS');
      assert.ok(s.ms < 1000, `${s.ms.toFixed(1)} ms`);
    }
    // Only the first call pays the time budget; the breaker skips Redis for the others.
    assert.ok(
      stalled.slice(1).every((s) => s.ms < 50),
      stalled.map((s) => s.ms.toFixed(1)).join(' '),
    );
    redis.thaw();
    assert.ok(await eventually(async () => (await timedFetch('ep:p:1:x', counter)).status === 'HIT', 5000), 'HITs resume');
  });

  it('when Redis is down at start, then the service starts, answers, and uses Redis once it appears', async () => {
    await c.cache.close();
    await redis.kill();
    const started = performance.now();
    c = await testCache(redis.url, {}, { namespace: uniqueNamespace('late') });
    assert.ok(performance.now() - started < 2000, 'start does not wait for Redis');
    const counter = countingCompute(undefined, 5);
    assert.equal((await timedFetch('ep:q:1:x', counter)).status, 'MISS');
    assert.equal(await c.cache.ready(), false);
    await redis.restart();
    assert.ok(await eventually(async () => (await timedFetch('ep:q:1:x', counter)).status === 'HIT', 6000), 'HITs once Redis is up');
  });

  it('when Redis is down, then warming skips its ticks without errors and resumes afterwards', async () => {
    await c.cache.close();
    c = await testCache(redis.url, { WARMING_TICK: '* * * * * *', WARMING_SCALE: '1' }, { namespace: uniqueNamespace('warmdown') });
    const runs: number[] = [];
    c.cache.startWarming(async () => {
      runs.push(Date.now());
      return '{"result":["warm"]}';
    });
    await c.cache.fetch(request('ep:r:1:x', { warmPeriodSeconds: 1 }), countingCompute().compute);
    await redis.kill();
    await sleep(2500);
    assert.equal(runs.length, 0, 'nothing to read the live keys from');
    await redis.restart();
    // The restarted Redis is empty: the next request registers the key again.
    assert.ok(
      await eventually(async () => {
        await c.cache.fetch(request('ep:r:1:x', { warmPeriodSeconds: 1 }), countingCompute().compute);
        return runs.length > 0;
      }, 8000),
      'warming resumes',
    );
  });
});
