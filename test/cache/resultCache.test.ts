import assert from 'node:assert/strict';
import { MemoryStore } from '../../src/cache/memoryStore.js';
import { TooManyRequestsError } from '../../src/errors.js';
import { eventually, sleep } from '../support/wait.js';
import { SHARED_REDIS_URL, countingCompute, request, testCache, uniqueNamespace, withRawRedis, type TestCache } from './support.js';

/**
 * These tests are about single flight and lifetimes, not about a slow Redis: on a loaded machine a
 * Redis answer can take longer than the guard's 50 ms, and the cache would then (rightly) compute
 * without it (test/cache/guard.test.ts covers that).
 */
const SLOW_REDIS_MS = 5_000;

/** The same behaviour on both stores: Redis (shared by replicas) and in-process. */
for (const kind of ['redis', 'memory'] as const) {
  describe(`result cache (${kind} store)`, () => {
    const opened: TestCache[] = [];
    const open = async (namespace: string) => {
      const c = await testCache(kind === 'redis' ? SHARED_REDIS_URL : undefined, {}, { namespace, redisTimeoutMs: SLOW_REDIS_MS });
      opened.push(c);
      return c;
    };
    afterEach(async () => {
      for (const c of opened.splice(0)) await c.cache.close();
    });

    it('when a key is fetched twice, then the second fetch is a HIT with byte-identical body and no compute', async () => {
      const { cache, events } = await open(uniqueNamespace('hit'));
      const counter = countingCompute(() => '{"result":[{"t":1700000000000000,"s":"é ünicode \\u2028"}]}');
      const first = await cache.fetch(request('ep:a:1:x'), counter.compute);
      const second = await cache.fetch(request('ep:a:1:x'), counter.compute);
      assert.equal(first.status, 'MISS');
      assert.equal(second.status, 'HIT');
      assert.equal(second.body, first.body);
      assert.equal(Buffer.compare(Buffer.from(second.body), Buffer.from(first.body)), 0);
      assert.equal(counter.calls, 1);
      assert.equal(await events('miss'), 1);
      assert.equal(await events('hit'), 1);
    });

    it('when 50 fetches of one key arrive at once, then the body is computed once and all 50 get it', async () => {
      const { cache } = await open(uniqueNamespace('flight'));
      const counter = countingCompute(undefined, 100);
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => cache.fetch(request('ep:b:1:x'), counter.compute)));
      assert.equal(counter.calls, 1);
      assert.ok(outcomes.every((o) => o.body === outcomes[0].body));
    });

    it('when different keys are fetched, then each is computed and cached separately', async () => {
      const { cache } = await open(uniqueNamespace('keys'));
      const counter = countingCompute();
      const a = await cache.fetch(request('ep:c:1:a'), counter.compute);
      const b = await cache.fetch(request('ep:c:1:b'), counter.compute);
      assert.notEqual(a.body, b.body);
      assert.equal((await cache.fetch(request('ep:c:1:a'), counter.compute)).body, a.body);
      assert.equal((await cache.fetch(request('ep:c:1:b'), counter.compute)).body, b.body);
      assert.equal(counter.calls, 2);
    });

    it("when the request that computes is refused by its own key's limits (429), then a waiter with another key computes for itself", async () => {
      const { cache } = await open(uniqueNamespace('refused'));
      // The first request's computation refuses only once the second has joined its flight: a fetch
      // joins a flight of this process at once (no await before it is registered), so no sleep decides it.
      let refuse!: () => void;
      const refusal = new Promise<void>((resolve) => (refuse = resolve));
      const refused = async (): Promise<string> => {
        await refusal;
        throw new TooManyRequestsError('This API key has used up its database query time; retry in 5 s.', 5, 'queryTimeExhausted');
      };
      const counter = countingCompute();
      const firstFetch = cache.fetch(request('ep:r:1:x'), refused);
      const secondFetch = cache.fetch(request('ep:r:1:x'), counter.compute);
      refuse();
      const [first, second] = await Promise.allSettled([firstFetch, secondFetch]);
      assert.equal(first.status, 'rejected');
      assert.ok(first.reason instanceof TooManyRequestsError);
      assert.equal(second.status, 'fulfilled');
      assert.equal(counter.calls, 1);
      assert.equal((await cache.fetch(request('ep:r:1:x'), counter.compute)).status, 'HIT');
    });

    it('when compute fails, then every waiter gets the error and the next fetch computes again', async () => {
      const { cache } = await open(uniqueNamespace('fail'));
      let calls = 0;
      const failing = async () => {
        calls++;
        await sleep(30);
        throw new Error('query failed');
      };
      const results = await Promise.allSettled(Array.from({ length: 5 }, () => cache.fetch(request('ep:d:1:x'), failing)));
      assert.ok(results.every((r) => r.status === 'rejected' && (r.reason as Error).message === 'query failed'));
      assert.equal(calls, 1);
      const counter = countingCompute();
      const next = await cache.fetch(request('ep:d:1:x'), counter.compute);
      assert.equal(next.status, 'MISS');
      assert.equal(counter.calls, 1, 'the lock of the failed computation was released');
    });

    it('when the lifetime is 0, then nothing is cached', async () => {
      const { cache, events } = await open(uniqueNamespace('ttl0'));
      const counter = countingCompute();
      await cache.fetch(request('ep:e:1:x', { ttlSeconds: 0 }), counter.compute);
      await cache.fetch(request('ep:e:1:x', { ttlSeconds: 0 }), counter.compute);
      assert.equal(counter.calls, 2);
      assert.equal(await events('bypass'), 2);
    });

    it('when the lifetime has passed, then the key is computed again', async () => {
      // The in-process store runs on the cache's clock, moved here by hand; Redis expires keys on its own clock.
      let clock = Date.now();
      const c = await testCache(
        kind === 'redis' ? SHARED_REDIS_URL : undefined,
        {},
        { namespace: uniqueNamespace('expire'), now: () => clock, redisTimeoutMs: SLOW_REDIS_MS },
      );
      opened.push(c);
      const { cache } = c;
      const counter = countingCompute();
      await cache.fetch(request('ep:f:1:x', { ttlSeconds: 1 }), counter.compute);
      assert.equal((await cache.fetch(request('ep:f:1:x', { ttlSeconds: 1 }), counter.compute)).status, 'HIT');
      clock += 1001;
      if (kind === 'redis') await sleep(1100);
      assert.equal((await cache.fetch(request('ep:f:1:x', { ttlSeconds: 1 }), counter.compute)).status, 'MISS');
      assert.equal(counter.calls, 2);
    });

    it('ready() says whether a shared cache answers', async () => {
      const { cache } = await open(uniqueNamespace('ready'));
      assert.equal(await cache.ready(), kind === 'redis' ? true : 'none');
    });
  });
}

describe('result cache shared by two replicas (one Redis)', () => {
  it('when both replicas get 25 concurrent first calls of one key, then the body is computed once in all', async () => {
    const namespace = uniqueNamespace('replicas');
    const a = await testCache(SHARED_REDIS_URL, {}, { namespace, redisTimeoutMs: SLOW_REDIS_MS });
    const b = await testCache(SHARED_REDIS_URL, {}, { namespace, redisTimeoutMs: SLOW_REDIS_MS });
    try {
      const counter = countingCompute(undefined, 150);
      const calls = [a, b].flatMap(({ cache }) => Array.from({ length: 25 }, () => cache.fetch(request('ep:g:1:x'), counter.compute)));
      const outcomes = await Promise.all(calls);
      assert.equal(counter.calls, 1);
      assert.ok(outcomes.every((o) => o.body === outcomes[0].body));
      assert.equal((await b.cache.fetch(request('ep:g:1:x'), counter.compute)).status, 'HIT');
      assert.equal((await a.events('singleflight_wait')) + (await b.events('singleflight_wait')), 49);
    } finally {
      await a.cache.close();
      await b.cache.close();
    }
  });

  it('when the replica holding the lock fails, then a waiting replica takes over and computes', async () => {
    const namespace = uniqueNamespace('takeover');
    const env = { QUERY_TIMEOUT_MS: '60000' };
    const a = await testCache(SHARED_REDIS_URL, env, { namespace, redisTimeoutMs: SLOW_REDIS_MS });
    const b = await testCache(SHARED_REDIS_URL, env, { namespace, redisTimeoutMs: SLOW_REDIS_MS });
    try {
      // Replica a holds the lock and computes until the test makes it fail, once b waits on that lock. The
      // lock outlives the test's timeout (QUERY_TIMEOUT_MS 60 s), so b can only take over on its release.
      let computing!: () => void;
      const aComputes = new Promise<void>((resolve) => (computing = resolve));
      let fail!: () => void;
      const failure = new Promise<void>((resolve) => (fail = resolve));
      const failing = async (): Promise<string> => {
        computing();
        await failure;
        throw new Error('boom');
      };
      const counter = countingCompute();
      const first = a.cache.fetch(request('ep:h:1:x'), failing).then(
        () => undefined,
        (err: Error) => err,
      );
      await aComputes;
      const secondFetch = b.cache.fetch(request('ep:h:1:x'), counter.compute);
      assert.ok(await eventually(async () => (await b.events('singleflight_wait')) === 1, 20_000, 5), 'b waits on a’s lock');
      fail();
      const second = await secondFetch;
      assert.equal((await first)?.message, 'boom');
      assert.equal(second.status, 'MISS');
      assert.equal(counter.calls, 1);
    } finally {
      await a.cache.close();
      await b.cache.close();
    }
  });

  it('stores the body under the namespaced key with the lifetime, and no lock is left behind', async () => {
    const namespace = uniqueNamespace('layout');
    const { cache } = await testCache(SHARED_REDIS_URL, {}, { namespace, redisTimeoutMs: SLOW_REDIS_MS });
    try {
      await withRawRedis(async (raw) => {
        const counter = countingCompute(() => '{"result":[]}');
        await cache.fetch(request('ep:i:3:abc', { ttlSeconds: 900 }), counter.compute);
        assert.equal(await raw.get(`${namespace}ep:i:3:abc`), '{"result":[]}');
        const ttl = await raw.ttl(`${namespace}ep:i:3:abc`);
        assert.ok(ttl > 890 && ttl <= 900, `ttl ${ttl}`);
        assert.equal(await raw.exists(`${namespace}lock:ep:i:3:abc`), 0);
      });
    } finally {
      await cache.close();
    }
  });
});

describe('in-process store bounds', () => {
  it('when more entries than allowed are stored, then the least recently used are evicted', async () => {
    const store = new MemoryStore({ maxEntries: 3 });
    for (const k of ['a', 'b', 'c']) await store.put(k, k, 60);
    await store.get('a'); // a is now most recently used
    await store.put('d', 'd', 60);
    assert.equal(await store.get('b'), null);
    assert.equal(await store.get('a'), 'a');
    assert.equal(await store.get('c'), 'c');
    assert.equal(await store.get('d'), 'd');
    assert.equal(store.size.entries, 3);
  });

  it('when the summed size passes the bound, then old entries are evicted until it fits', async () => {
    const store = new MemoryStore({ maxBytes: 1000 });
    await store.put('a', 'x'.repeat(400), 60);
    await store.put('b', 'y'.repeat(400), 60);
    await store.put('c', 'z'.repeat(400), 60);
    assert.equal(await store.get('a'), null);
    assert.equal(store.size.bytes, 800);
    await store.put('huge', 'h'.repeat(2000), 60);
    assert.equal(await store.get('huge'), null, 'a body larger than the whole cache is not stored');
    assert.ok(store.size.bytes <= 1000);
  });
});
