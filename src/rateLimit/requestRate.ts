/**
 * Requests per API key (docs/API.md, "Rate limits"): rate-limiter-flexible's BurstyRateLimiter,
 * in Redis when REDIS_URL is set (so every service process counts against the same budget),
 * else in this process.
 *
 * rate-limiter-flexible has no token bucket; its documented way to allow bursts is two fixed
 * windows: `perSecond` points per second, and when those are spent, a burst allowance of
 * `burst - perSecond` points per BURST_WINDOW. So a quiet key may send `burst` requests within
 * one second, and over a long run at most perSecond × (1 + (burst/perSecond − 1)/BURST_WINDOW_S)
 * per second (110 for the defaults 100/200): the bucket's shape, with a refill of the burst
 * allowance every 10 s instead of continuously.
 *
 * Redis failing (down, or slower than REDIS_WAIT_MS) must not fail or hold requests: each Redis
 * limiter has an in-process insurance limiter with the same limits, which decides while Redis
 * cannot (rate-limiter-flexible's insuranceLimiter), per process.
 */
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RedisClient } from './redisClient.js';
import { withinRedisWait } from './redisWait.js';
import type { KeyLimits } from '../auth/keyLimits.js';

const BURST_WINDOW_S = 10;

export interface RateDecision {
  allowed: boolean;
  /** When refused: how long until the key may send again. */
  retryAfterMs: number;
}

type Consumer = Pick<RateLimiterAbstract, 'consume'>;

export class RequestRateLimiter {
  /** One limiter per distinct (perSecond, burst): points are part of a limiter's configuration. */
  private readonly limiters = new Map<string, { redis: Consumer | undefined; memory: Consumer }>();

  constructor(
    private readonly redis: RedisClient | undefined,
    private readonly prefix: string,
  ) {}

  /** Takes one request of `keyId` from its budget. */
  async consume(keyId: string, limits: KeyLimits): Promise<RateDecision> {
    if (limits.perSecond <= 0) return { allowed: true, retryAfterMs: 0 };
    const pair = this.limiterFor(limits);
    try {
      if (!pair.redis) await pair.memory.consume(keyId);
      else await withinRedisWait(pair.redis.consume(keyId), () => pair.memory.consume(keyId));
      return { allowed: true, retryAfterMs: 0 };
    } catch (res) {
      if (res instanceof RateLimiterRes) return { allowed: false, retryAfterMs: Math.max(1, res.msBeforeNext) };
      // Neither store could decide (not expected: the insurance limiter is in memory): let it through.
      return { allowed: true, retryAfterMs: 0 };
    }
  }

  private limiterFor(limits: KeyLimits) {
    const id = `${limits.perSecond}/${limits.burst}`;
    let pair = this.limiters.get(id);
    if (pair) return pair;
    const memory = (keyPrefix: string, points: number, duration: number) => new RateLimiterMemory({ keyPrefix, points, duration });
    const make = (store: (keyPrefix: string, points: number, duration: number) => RateLimiterAbstract): Consumer => {
      const extra = limits.burst - limits.perSecond;
      const base = store(`${this.prefix}rate:${id}:`, limits.perSecond, 1);
      // A burst equal to the rate: no burst allowance at all (a limiter cannot have 0 points).
      if (extra <= 0) return base;
      const burst = store(`${this.prefix}burst:${id}:`, extra, BURST_WINDOW_S);
      return new BurstyRateLimiter(base, burst);
    };
    const client = this.redis;
    pair = {
      memory: make(memory),
      redis: client
        ? make(
            (keyPrefix, points, duration) =>
              new RateLimiterRedis({
                storeClient: client,
                useRedisPackage: true,
                rejectIfRedisNotReady: true,
                keyPrefix,
                points,
                duration,
                // A key that has spent its window is refused in this process until the window ends, without
                // asking Redis: an abusive client's flood of refused requests then costs no Redis round trip.
                inMemoryBlockOnConsumed: points,
                inMemoryBlockDuration: 0,
                insuranceLimiter: memory(`insurance:${keyPrefix}`, points, duration),
              }),
          )
        : undefined,
    };
    this.limiters.set(id, pair);
    return pair;
  }
}
