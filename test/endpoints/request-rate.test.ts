/**
 * The request rate per key decided in this process (src/rateLimit/requestRate.ts,
 * fixedWindows.ts): without Redis, and while Redis cannot answer. Time is the test's clock, moved
 * by hand. Over HTTP: rate-limits.test.ts; shared by processes: test/hardening/processes.test.ts.
 */
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { RequestRateLimiter } from '../../src/rateLimit/requestRate.js';
import type { RedisClient } from '../../src/rateLimit/redisClient.js';
import { uniqueNamespace } from '../cache/support.js';
import { freePort } from '../support/net.js';

const limits = { perSecond: 5, burst: 8 };

async function take(limiter: RequestRateLimiter, key: string, n: number) {
  const decisions = [];
  for (let i = 0; i < n; i++) decisions.push(await limiter.consume(key, limits));
  return decisions;
}

describe('request rate decided in this process', () => {
  let clock: number;
  beforeEach(() => {
    clock = 1_000_000;
  });

  it('when a key sends past its burst, then the rate and the burst allowance are spent, and each window refills when it ends', async () => {
    const limiter = new RequestRateLimiter(undefined, uniqueNamespace('rate'), () => clock);
    const first = await take(limiter, 'k', 10);
    assert.deepEqual(
      first.map((d) => d.allowed),
      [...Array(8).fill(true), false, false],
      'the burst: 5 of the rate and 3 of the allowance',
    );
    clock += 400;
    assert.deepEqual(await limiter.consume('k', limits), { allowed: false, retryAfterMs: 600 }, 'until the rate window ends');
    assert.equal((await limiter.consume('other', limits)).allowed, true, 'another key has its own budget');

    clock += 600; // the one-second window has ended; the burst allowance's (10 s) has not
    assert.deepEqual(
      (await take(limiter, 'k', 6)).map((d) => d.allowed),
      [...Array(5).fill(true), false],
    );
    clock += 9_000; // both windows have ended: a burst again
    assert.equal((await take(limiter, 'k', 8)).filter((d) => d.allowed).length, 8);
  });

  it('when a key has no rate limit, then nothing is counted', async () => {
    const limiter = new RequestRateLimiter(undefined, uniqueNamespace('rate'), () => clock);
    const decisions = [];
    for (let i = 0; i < 50; i++) decisions.push(await limiter.consume('k', { perSecond: 0, burst: 0 }));
    assert.ok(decisions.every((d) => d.allowed));
  });

  it('when Redis is unreachable, then this process decides on the same limits, at once', async () => {
    // Nothing listens on this port: the client is never ready, so each Redis call is refused at once.
    const client: RedisClient = createClient({
      url: `redis://127.0.0.1:${await freePort()}`,
      disableOfflineQueue: true,
      socket: { reconnectStrategy: false, connectTimeout: 200 },
    });
    client.on('error', () => undefined);
    await client.connect().catch(() => undefined);
    try {
      const limiter = new RequestRateLimiter(client, uniqueNamespace('rate'), () => clock);
      assert.deepEqual(
        (await take(limiter, 'k', 9)).map((d) => d.allowed),
        [...Array(8).fill(true), false],
      );
      clock += 1000;
      assert.equal((await limiter.consume('k', limits)).allowed, true);
    } finally {
      if (client.isOpen) client.destroy();
    }
  });
});
