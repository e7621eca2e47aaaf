import assert from 'node:assert/strict';
import type { WarmSpec } from '../../src/cache/types.js';
import {
  SHARED_REDIS_URL,
  countingCompute,
  eventually,
  rawRedis,
  request,
  sleep,
  spec,
  testCache,
  uniqueNamespace,
  type TestCache,
} from './support.js';

/** Warming on a one-second tick with periods of 1–2 s (WARMING_SCALE shortens the endpoint's period). */
const EVERY_SECOND = { WARMING_TICK: '* * * * * *' };

function countingRunner(label: string, runs: string[]) {
  return async (s: WarmSpec) => {
    runs.push(label);
    return `{"result":[{"warmed":${runs.length},"endpoint":"${s.endpointId}"}]}`;
  };
}

describe('cache warming', function () {
  this.timeout(30_000);
  const opened: TestCache[] = [];
  afterEach(async () => {
    for (const c of opened.splice(0)) await c.cache.close();
  });
  const open = async (url: string | undefined, namespace: string, env: Record<string, string>) => {
    const c = await testCache(url, env, { namespace });
    opened.push(c);
    return c;
  };

  it('when two replicas share one Redis, then a live key is re-run once per period in all, not once per replica', async () => {
    const namespace = uniqueNamespace('warm2');
    // Period 200 s × 0.01 = 2 s.
    const a = await open(SHARED_REDIS_URL, namespace, { ...EVERY_SECOND, WARMING_SCALE: '0.01' });
    const b = await open(SHARED_REDIS_URL, namespace, { ...EVERY_SECOND, WARMING_SCALE: '0.01' });
    const runs: string[] = [];
    a.cache.startWarming(countingRunner('a', runs));
    b.cache.startWarming(countingRunner('b', runs));

    const req = request('ep:w:1:x', { ttlSeconds: 60, warmPeriodSeconds: 200, spec: spec('w') });
    const counter = countingCompute();
    const started = Date.now();
    await a.cache.fetch(req, counter.compute);
    await sleep(9_000);
    const periods = (Date.now() - started) / 2000;
    assert.ok(Math.abs(runs.length - Math.floor(periods)) <= 1, `${runs.length} runs in ${periods.toFixed(2)} periods (${runs.join('')})`);
    assert.ok(runs.length >= 3);
    if (process.env.CACHE_TEST_VERBOSE) console.log(`    ${runs.length} runs in ${periods.toFixed(2)} periods: ${runs.join('')}`);
    assert.equal((await a.events('warm_run')) + (await b.events('warm_run')), runs.length);

    // The warmed body is what a request gets, without computing.
    const hit = await b.cache.fetch(req, counter.compute);
    assert.equal(hit.status, 'HIT');
    assert.match(hit.body, /"warmed":/);
    assert.equal(counter.calls, 1);
  });

  it('when a live key is requested, then each run stores it with a fresh lifetime', async () => {
    const namespace = uniqueNamespace('warmttl');
    const a = await open(SHARED_REDIS_URL, namespace, { ...EVERY_SECOND, WARMING_SCALE: '1' });
    const runs: string[] = [];
    a.cache.startWarming(countingRunner('a', runs));
    const raw = await rawRedis();
    try {
      const req = request('ep:t:1:x', { ttlSeconds: 3, warmPeriodSeconds: 1, spec: spec('t') });
      await a.cache.fetch(req, countingCompute().compute);
      // Keep requesting: the key stays live; every run resets its lifetime to 3 s.
      for (let i = 0; i < 8; i++) {
        await sleep(500);
        assert.equal((await a.cache.fetch(req, countingCompute().compute)).status, 'HIT');
      }
      assert.ok(runs.length >= 3, `${runs.length} runs`);
      const ttl = await raw.pTTL(`${namespace}ep:t:1:x`);
      assert.ok(ttl > 1500, `ttl ${ttl} ms`);
    } finally {
      raw.destroy();
    }
  });

  it('when nobody requests a key during its lifetime, then it stops being warmed', async () => {
    const namespace = uniqueNamespace('warmstale');
    const a = await open(SHARED_REDIS_URL, namespace, { ...EVERY_SECOND, WARMING_SCALE: '1' });
    const runs: string[] = [];
    a.cache.startWarming(countingRunner('a', runs));
    const raw = await rawRedis();
    try {
      await a.cache.fetch(request('ep:s:1:x', { ttlSeconds: 2, warmPeriodSeconds: 1, spec: spec('s') }), countingCompute().compute);
      assert.ok(
        await eventually(async () => (await raw.zScore(`${namespace}warm:due`, 'ep:s:1:x')) === null, 6000),
        'dropped from the live set',
      );
      const after = runs.length;
      assert.ok(after >= 1 && after <= 3, `${after} runs during a 2 s lifetime with a 1 s period`);
      await sleep(2500);
      assert.equal(runs.length, after, 'no run after it was dropped');
      assert.equal(await raw.hExists(`${namespace}warm:spec`, 'ep:s:1:x'), 0);
    } finally {
      raw.destroy();
    }
  });

  it('when a run fails (endpoint changed or deleted), then the key is dropped and warm_failure counted', async () => {
    const namespace = uniqueNamespace('warmfail');
    const a = await open(SHARED_REDIS_URL, namespace, { ...EVERY_SECOND, WARMING_SCALE: '1' });
    let calls = 0;
    a.cache.startWarming(async () => {
      calls++;
      throw new Error('endpoint version changed');
    });
    const raw = await rawRedis();
    try {
      await a.cache.fetch(request('ep:f:1:x', { ttlSeconds: 60, warmPeriodSeconds: 1, spec: spec('f') }), countingCompute().compute);
      assert.ok(await eventually(async () => (await a.events('warm_failure')) === 1, 4000));
      assert.equal(await raw.zScore(`${namespace}warm:due`, 'ep:f:1:x'), null);
      await sleep(2200);
      assert.equal(calls, 1);
    } finally {
      raw.destroy();
    }
  });

  it('when a dropped key is requested again, then it is registered and warmed again', async () => {
    const namespace = uniqueNamespace('rereg');
    const a = await open(SHARED_REDIS_URL, namespace, { ...EVERY_SECOND, WARMING_SCALE: '1' });
    let calls = 0;
    a.cache.startWarming(async () => {
      if (++calls === 1) throw new Error('database briefly unavailable');
      return '{"result":["again"]}';
    });
    const req = request('ep:r:1:x', { ttlSeconds: 60, warmPeriodSeconds: 1, spec: spec('r') });
    await a.cache.fetch(req, countingCompute().compute);
    assert.ok(await eventually(async () => (await a.events('warm_failure')) === 1, 4000));
    await sleep(1000); // requests record themselves at most once a second
    assert.equal((await a.cache.fetch(req, countingCompute().compute)).status, 'HIT');
    assert.ok(await eventually(async () => (await a.events('warm_run')) >= 1, 4000), 'warmed again');
    assert.equal((await a.cache.fetch(req, countingCompute().compute)).body, '{"result":["again"]}');
  });

  it('when the key has no warming period, then it is never re-run', async () => {
    const namespace = uniqueNamespace('nowarm');
    const a = await open(SHARED_REDIS_URL, namespace, { ...EVERY_SECOND, WARMING_SCALE: '1' });
    const runs: string[] = [];
    a.cache.startWarming(countingRunner('a', runs));
    await a.cache.fetch(request('ep:n:1:x', { ttlSeconds: 60, warmPeriodSeconds: null }), countingCompute().compute);
    await sleep(2200);
    assert.equal(runs.length, 0);
  });

  it('in-process store: a live key is re-run once per period and dropped when not requested', async () => {
    const a = await open(undefined, uniqueNamespace('memwarm'), { ...EVERY_SECOND, WARMING_SCALE: '1' });
    const runs: string[] = [];
    a.cache.startWarming(countingRunner('m', runs));
    const req = request('ep:m:1:x', { ttlSeconds: 4, warmPeriodSeconds: 1, spec: spec('m') });
    const started = Date.now();
    await a.cache.fetch(req, countingCompute().compute);
    await sleep(3_500);
    const periods = (Date.now() - started) / 1000;
    assert.ok(Math.abs(runs.length - Math.floor(periods)) <= 1, `${runs.length} runs in ${periods.toFixed(2)} periods`);
    assert.match((await a.cache.fetch(req, countingCompute().compute)).body, /"warmed":/);
    // Requested at ~3.5 s; lifetime 4 s: dropped by ~8.5 s.
    await sleep(5_500);
    const after = runs.length;
    await sleep(1_500);
    assert.equal(runs.length, after);
  });
});
