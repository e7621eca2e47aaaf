/**
 * The query-time bucket of a key (src/rateLimit/queryTimeBudget.ts, docs/API.md "Rate limits"),
 * on its own: debt carried over and the refill, in this process and in the shared Redis; shared by
 * two service processes (two buckets on one Redis); a Redis that is down or stalled leaves the
 * decision to the in-process bucket and never refuses a query for that. The clock is the test's:
 * a query "takes" the time the test moves it by.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import type { RedisClient } from '../../src/rateLimit/redisClient.js';
import { QueryTimeBudget } from '../../src/rateLimit/queryTimeBudget.js';
import { OwnRedis, SHARED_REDIS_URL, uniqueNamespace } from '../cache/support.js';
import { eventually } from '../support/wait.js';

/** A client as the service's limiters open it: no offline queue, so a lost connection is seen at once. */
async function connect(url: string): Promise<RedisClient> {
  const client = createClient({ url, disableOfflineQueue: true, socket: { connectTimeout: 500, reconnectStrategy: () => 100 } });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

function testClock(start = 1_000_000) {
  const clock = { t: start, now: () => clock.t };
  return clock;
}

/** One "query" of `keyId` that takes `ms` on the test's clock. */
function queryTaking(
  budget: QueryTimeBudget,
  clock: { t: number },
  keyId: string,
  limits: { perSecond: number; burst: number },
  ms: number,
) {
  return budget.timed(keyId, limits, async () => {
    clock.t += ms;
    return 'rows';
  });
}

describe('query-time bucket per key', function () {
  this.timeout(20_000);
  let shared: RedisClient;
  before(async () => {
    shared = await connect(SHARED_REDIS_URL);
  });
  after(() => shared.destroy());

  for (const store of ['in-process', 'Redis'] as const) {
    it(`(${store}) when a query runs longer than the burst, then the key waits for its debt to be refilled, and is served again once it is`, async () => {
      const clock = testClock();
      const budget = new QueryTimeBudget(store === 'Redis' ? shared : undefined, uniqueNamespace('qtb'), clock.now);
      const limits = { perSecond: 100, burst: 1000 };
      const key = randomUUID();
      assert.deepEqual(await budget.check(key, limits), { allowed: true, retryAfterMs: 0 }, 'a key never seen has a full bucket');
      assert.equal(await queryTaking(budget, clock, key, limits, 5000), 'rows');
      // 1000 − 5000: 4000 ms of debt at 100 ms/s is 40 s, four times what an empty bucket waits.
      const refused = await budget.check(key, limits);
      assert.equal(refused.allowed, false);
      assert.equal(refused.retryAfterMs, 40_001);
      clock.t += 39_000;
      assert.equal((await budget.check(key, limits)).allowed, false, 'still in debt after 39 s');
      clock.t += 1_001;
      assert.equal((await budget.check(key, limits)).allowed, true, 'positive again after 40 s');
      // The refill stops at the burst: a long idle time buys no more than `burst`.
      clock.t += 3_600_000;
      await queryTaking(budget, clock, key, limits, 1000);
      assert.equal((await budget.check(key, limits)).allowed, false);
    });
  }

  it('when a query fails, then its time is charged all the same', async () => {
    const clock = testClock();
    const budget = new QueryTimeBudget(shared, uniqueNamespace('qtb'), clock.now);
    const limits = { perSecond: 1000, burst: 2000 };
    const key = randomUUID();
    const failing = budget.timed(key, limits, async () => {
      clock.t += 2500;
      throw new Error('statement timeout');
    });
    await assert.rejects(failing, /statement timeout/);
    const refused = await budget.check(key, limits);
    assert.equal(refused.allowed, false);
    assert.equal(refused.retryAfterMs, 501);
  });

  it('when two service processes share Redis, then time spent through one is refused by the other; idle buckets expire', async () => {
    const clock = testClock();
    const prefix = uniqueNamespace('qtb');
    const other = await connect(SHARED_REDIS_URL);
    try {
      const one = new QueryTimeBudget(shared, prefix, clock.now);
      const two = new QueryTimeBudget(other, prefix, clock.now);
      const limits = { perSecond: 1000, burst: 3000 };
      const key = randomUUID();
      await queryTaking(one, clock, key, limits, 4000);
      assert.equal((await two.check(key, limits)).allowed, false, 'the other process sees the debt');
      assert.equal((await two.check(randomUUID(), limits)).allowed, true, 'another key has its own bucket');
      // The bucket is gone once it would be full again (4 s of refill here, plus a margin).
      const ttl = await shared.pTTL(`${prefix}querytime:${key}`);
      assert.ok(ttl > 0 && ttl <= 5000, `expires in ${ttl} ms`);
    } finally {
      other.destroy();
    }
  });

  it('when the limits are 0, then there is no budget: nothing is refused or charged', async () => {
    const clock = testClock();
    const budget = new QueryTimeBudget(shared, uniqueNamespace('qtb'), clock.now);
    const key = randomUUID();
    for (const limits of [
      { perSecond: 0, burst: 1000 },
      { perSecond: 1000, burst: 0 },
    ]) {
      await queryTaking(budget, clock, key, limits, 60_000);
      assert.equal((await budget.check(key, limits)).allowed, true);
    }
    assert.equal((await budget.check(key, { perSecond: 1, burst: 1 })).allowed, true, 'nothing was charged');
  });

  describe('Redis faults (a redis-server of this test, never the shared one)', () => {
    let redis: OwnRedis;
    before(async () => {
      redis = await OwnRedis.start();
    });
    after(async () => {
      redis.thaw();
      await redis.kill();
    });

    it('when a key is refused, then its requests until the refill are refused without a round trip to Redis, unless its limits change', async () => {
      const clock = testClock();
      const client = await connect(redis.url);
      const evals = async () => Number(/cmdstat_eval:calls=(\d+)/.exec(await client.info('commandstats'))?.[1] ?? 0);
      try {
        const budget = new QueryTimeBudget(client, uniqueNamespace('qtb'), clock.now);
        const limits = { perSecond: 1000, burst: 2000 };
        const key = randomUUID();
        await queryTaking(budget, clock, key, limits, 3000);
        const first = await budget.check(key, limits);
        assert.equal(first.allowed, false);
        const before = await evals();
        clock.t += 500;
        for (let i = 0; i < 50; i++)
          assert.deepEqual(await budget.check(key, limits), { allowed: false, retryAfterMs: first.retryAfterMs - 500 });
        assert.equal(await evals(), before, 'no script ran for the 50 refusals');
        assert.equal((await budget.check(key, { perSecond: 10_000, burst: 2000 })).allowed, true, 'a faster refill applies at once');
        clock.t += first.retryAfterMs;
        assert.equal((await budget.check(key, limits)).allowed, true, 'served again once refilled');
        assert.ok((await evals()) > before);
      } finally {
        client.destroy();
      }
    });

    it('when Redis goes down, then queries are not refused for that, and the in-process bucket (which has the charges) decides', async () => {
      const clock = testClock();
      const client = await connect(redis.url);
      try {
        const budget = new QueryTimeBudget(client, uniqueNamespace('qtb'), clock.now);
        const limits = { perSecond: 1000, burst: 2000 };
        const inDebt = randomUUID();
        await queryTaking(budget, clock, inDebt, limits, 3000);
        await redis.kill();
        assert.ok(await eventually(() => !client.isReady, 5000), 'the client sees Redis gone');
        assert.equal((await budget.check(randomUUID(), limits)).allowed, true, 'a fresh key is served without Redis');
        assert.equal((await budget.check(inDebt, limits)).allowed, false, 'a key in debt stays in debt');
        // While Redis is down, the in-process bucket counts the time.
        const spender = randomUUID();
        assert.equal(await queryTaking(budget, clock, spender, limits, 2500), 'rows');
        const refused = await budget.check(spender, limits);
        assert.equal(refused.allowed, false);
        assert.equal(refused.retryAfterMs, 501);
      } finally {
        client.destroy();
        await redis.restart();
      }
    });

    it('when Redis stalls, then the in-process bucket decides instead of holding the query', async () => {
      const clock = testClock();
      const client = await connect(redis.url);
      try {
        const budget = new QueryTimeBudget(client, uniqueNamespace('qtb'), clock.now);
        const limits = { perSecond: 1000, burst: 2000 };
        const key = randomUUID();
        redis.freeze();
        assert.equal(client.isReady, true, 'a stalled Redis keeps its connection');
        assert.equal((await budget.check(key, limits)).allowed, true);
        assert.equal(await queryTaking(budget, clock, key, limits, 2500), 'rows');
        assert.equal((await budget.check(key, limits)).allowed, false);
      } finally {
        redis.thaw();
        client.destroy();
      }
    });
  });
});
