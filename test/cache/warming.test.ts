import assert from 'node:assert/strict';
import type { WarmSpec } from '../../src/cache/types.js';
import { eventually } from '../support/wait.js';
import { SHARED_REDIS_URL, countingCompute, request, spec, testCache, uniqueNamespace, withRawRedis, type TestCache } from './support.js';

/**
 * Warming passes are driven by hand on a clock the test moves (`warmNow` at each step), so a
 * period takes no real time; the schedule (node-cron) is set to a time that does not come during
 * a run, except in the one test of the schedule itself.
 */
const BY_HAND = { WARMING_TICK: '0 0 1 1 *', WARMING_SCALE: '1' };

function countingRunner(label: string, runs: string[]) {
  return (s: WarmSpec) => {
    runs.push(label);
    return Promise.resolve(`{"result":[{"warmed":${runs.length},"endpoint":"${s.endpointId}"}]}`);
  };
}

/** A clock the test moves; every cache it opens reads it. */
class TestClock {
  ms = Date.now();
  readonly now = () => this.ms;
}

describe('cache warming', function () {
  const opened: TestCache[] = [];
  let clock: TestClock;
  beforeEach(() => {
    clock = new TestClock();
  });
  afterEach(async () => {
    for (const c of opened.splice(0)) await c.cache.close();
  });
  const open = async (url: string | undefined, namespace: string, env: Record<string, string> = BY_HAND) => {
    // A Redis budget far above the default 50 ms: a slow call on a loaded machine would open the
    // breaker for a second of real time and skip the passes these tests count.
    const c = await testCache(url, env, { namespace, now: clock.now, redisTimeoutMs: 5_000 });
    opened.push(c);
    return c;
  };
  /** A cache in a namespace of its own (`name`), warming with countingRunner(`label`): each run is recorded in `runs`. */
  const openCounting = async (name: string, label: string, url: string | undefined = SHARED_REDIS_URL) => {
    const namespace = uniqueNamespace(name);
    const a = await open(url, namespace);
    const runs: string[] = [];
    a.cache.startWarming(countingRunner(label, runs));
    return { namespace, a, runs };
  };
  /** Moves the clock `ms` on in `steps` equal steps, with a warming pass of every cache after each. */
  const advance = async (ms: number, steps: number, ...caches: TestCache[]) => {
    for (let i = 0; i < steps; i++) {
      clock.ms += ms / steps;
      for (const c of caches) await c.cache.warmNow();
    }
  };

  it('when two replicas share one Redis, then a live key is re-run once per period in all, not once per replica', async () => {
    const namespace = uniqueNamespace('warm2');
    const a = await open(SHARED_REDIS_URL, namespace);
    const b = await open(SHARED_REDIS_URL, namespace);
    const runs: string[] = [];
    a.cache.startWarming(countingRunner('a', runs));
    b.cache.startWarming(countingRunner('b', runs));

    const req = request('ep:w:1:x', { ttlSeconds: 60, warmPeriodSeconds: 2, spec: spec('w') });
    const counter = countingCompute();
    await a.cache.fetch(req, counter.compute);
    // 9 s in half-second ticks, both replicas passing at every tick: 4 whole periods of 2 s.
    await advance(9_000, 18, a, b);
    assert.equal(runs.length, 4, `runs: ${runs.join('')}`);
    assert.equal((await a.events('warm_run')) + (await b.events('warm_run')), 4);

    // The warmed body is what a request gets, without computing.
    const hit = await b.cache.fetch(req, counter.compute);
    assert.equal(hit.status, 'HIT');
    assert.match(hit.body, /"warmed":4/);
    assert.equal(counter.calls, 1);
  });

  it('when the schedule is started, then passes run on their own at each tick', async () => {
    // The real clock and a one-second tick: node-cron drives the warmer here, nothing else does.
    const c = await testCache(
      SHARED_REDIS_URL,
      { WARMING_TICK: '* * * * * *', WARMING_SCALE: '1' },
      { namespace: uniqueNamespace('warmcron') },
    );
    opened.push(c);
    const runs: string[] = [];
    c.cache.startWarming(countingRunner('c', runs));
    await c.cache.fetch(request('ep:c:1:x', { ttlSeconds: 60, warmPeriodSeconds: 1, spec: spec('c') }), countingCompute().compute);
    assert.ok(await eventually(() => runs.length >= 1, 5_000), 'warmed by the schedule');
  });

  it('when a live key is requested, then each run stores it with a fresh lifetime', async () => {
    const { namespace, a, runs } = await openCounting('warmttl', 'a');
    await withRawRedis(async (raw) => {
      const req = request('ep:t:1:x', { ttlSeconds: 3, warmPeriodSeconds: 1, spec: spec('t') });
      await a.cache.fetch(req, countingCompute().compute);
      // Keep requesting every half second: the key stays live and is re-run every second.
      for (let i = 0; i < 8; i++) {
        await advance(500, 1, a);
        assert.equal((await a.cache.fetch(req, countingCompute().compute)).status, 'HIT');
      }
      assert.equal(runs.length, 4);
      // The stored lifetime is Redis' own: cut it short, and the next run gives the full 3 s again.
      await raw.pExpire(`${namespace}ep:t:1:x`, 400);
      await advance(1000, 1, a);
      assert.equal(runs.length, 5);
      const ttl = await raw.pTTL(`${namespace}ep:t:1:x`);
      assert.ok(ttl > 2000, `ttl ${ttl} ms`);
    });
  });

  it('when nobody requests a key during its lifetime, then it stops being warmed', async () => {
    const { namespace, a, runs } = await openCounting('warmstale', 'a');
    await withRawRedis(async (raw) => {
      await a.cache.fetch(request('ep:s:1:x', { ttlSeconds: 2, warmPeriodSeconds: 1, spec: spec('s') }), countingCompute().compute);
      // Runs at 1 s and 2 s (2 s after the request is still within its lifetime); at 3 s it is dropped.
      await advance(3_000, 3, a);
      assert.equal(runs.length, 2);
      assert.equal(await raw.zScore(`${namespace}warm:due`, 'ep:s:1:x'), null, 'dropped from the live set');
      assert.equal(await raw.hExists(`${namespace}warm:spec`, 'ep:s:1:x'), 0);
      await advance(3_000, 3, a);
      assert.equal(runs.length, 2, 'no run after it was dropped');
    });
  });

  it('when a run fails (endpoint changed or deleted), then the key is dropped and warm_failure counted', async () => {
    const namespace = uniqueNamespace('warmfail');
    const a = await open(SHARED_REDIS_URL, namespace);
    let calls = 0;
    a.cache.startWarming(() => {
      calls++;
      return Promise.reject(new Error('endpoint version changed'));
    });
    await withRawRedis(async (raw) => {
      await a.cache.fetch(request('ep:f:1:x', { ttlSeconds: 60, warmPeriodSeconds: 1, spec: spec('f') }), countingCompute().compute);
      await advance(1_000, 1, a);
      assert.equal(await a.events('warm_failure'), 1);
      assert.equal(await raw.zScore(`${namespace}warm:due`, 'ep:f:1:x'), null);
      await advance(3_000, 3, a);
      assert.equal(calls, 1);
    });
  });

  it('when a dropped key is requested again, then it is registered and warmed again', async () => {
    const namespace = uniqueNamespace('rereg');
    const a = await open(SHARED_REDIS_URL, namespace);
    let calls = 0;
    a.cache.startWarming(() =>
      ++calls === 1 ? Promise.reject(new Error('database briefly unavailable')) : Promise.resolve('{"result":["again"]}'),
    );
    const req = request('ep:r:1:x', { ttlSeconds: 60, warmPeriodSeconds: 1, spec: spec('r') });
    await a.cache.fetch(req, countingCompute().compute);
    await advance(1_000, 1, a);
    assert.equal(await a.events('warm_failure'), 1);
    // Requests record themselves at most once a second: a request a second later registers the key again.
    await advance(1_000, 1, a);
    assert.equal(await a.events('warm_run'), 0);
    assert.equal((await a.cache.fetch(req, countingCompute().compute)).status, 'HIT');
    // The touch that registers it is not awaited by fetch: let it land before the next pass.
    assert.ok(await eventually(async () => (await rawRedisScore(namespace, 'ep:r:1:x')) !== null, 2_000), 'registered again');
    await advance(1_000, 1, a);
    assert.equal(await a.events('warm_run'), 1, 'warmed again');
    assert.equal((await a.cache.fetch(req, countingCompute().compute)).body, '{"result":["again"]}');
  });

  it('when the key has no warming period, then it is never re-run', async () => {
    const { a, runs } = await openCounting('nowarm', 'a');
    await a.cache.fetch(request('ep:n:1:x', { ttlSeconds: 60, warmPeriodSeconds: null }), countingCompute().compute);
    await advance(5_000, 5, a);
    assert.equal(runs.length, 0);
  });

  it('in-process store: a live key is re-run once per period and dropped when not requested', async () => {
    const { a, runs } = await openCounting('memwarm', 'm', undefined);
    const req = request('ep:m:1:x', { ttlSeconds: 4, warmPeriodSeconds: 1, spec: spec('m') });
    await a.cache.fetch(req, countingCompute().compute);
    await advance(3_500, 7, a);
    assert.equal(runs.length, 3);
    assert.match((await a.cache.fetch(req, countingCompute().compute)).body, /"warmed":3/);
    // Requested at 3.5 s with a lifetime of 4 s: runs at 4, 5, 6 and 7 s, dropped at 8 s.
    await advance(4_500, 9, a);
    assert.equal(runs.length, 7);
    await advance(3_000, 6, a);
    assert.equal(runs.length, 7);
  });
});

function rawRedisScore(namespace: string, key: string): Promise<number | null> {
  return withRawRedis((raw) => raw.zScore(`${namespace}warm:due`, key));
}
