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
 * Redis failing (down, or slower than REDIS_WAIT_MS) must not fail or hold requests: the
 * in-process store (fixedWindows.ts, the same windows on the limiter's clock) decides while Redis
 * cannot, per process.
 */
import { BurstyRateLimiter, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RedisClient } from './redisClient.js';
import { withinRedisWait } from './redisWait.js';
import type { KeyLimits } from '../auth/keyLimits.js';
import { BurstyWindows, FixedWindows } from './fixedWindows.js';

const BURST_WINDOW_S = 10;

export interface RateDecision {
  allowed: boolean;
  /** When refused: how long until the key may send again. */
  retryAfterMs: number;
}

/** What the request rate reads of a key's limits. */
export type RateLimits = Pick<KeyLimits, 'perSecond' | 'burst'>;

type Consumer = Pick<RateLimiterAbstract, 'consume'>;

export class RequestRateLimiter {
  /** One limiter per distinct (perSecond, burst): points are part of a limiter's configuration. */
  private readonly limiters = new Map<string, { redis: Consumer | undefined; memory: BurstyWindows }>();

  /** `now`: the clock of the in-process windows (tests move their own; Redis keeps its own time). */
  constructor(
    private readonly redis: RedisClient | undefined,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one request of `keyId` from its budget. */
  async consume(keyId: string, limits: RateLimits): Promise<RateDecision> {
    if (limits.perSecond <= 0) return { allowed: true, retryAfterMs: 0 };
    const pair = this.limiterFor(limits);
    if (!pair.redis) return decision(pair.memory.take(keyId));
    try {
      await withinRedisWait(pair.redis.consume(keyId));
      return { allowed: true, retryAfterMs: 0 };
    } catch (res) {
      if (res instanceof RateLimiterRes) return { allowed: false, retryAfterMs: Math.max(1, res.msBeforeNext) };
      // Redis down, not ready, or slower than REDIS_WAIT_MS: this process decides, on the same limits.
      return decision(pair.memory.take(keyId));
    }
  }

  private limiterFor(limits: RateLimits) {
    const id = `${limits.perSecond}/${limits.burst}`;
    let pair = this.limiters.get(id);
    if (pair) return pair;
    const extra = limits.burst - limits.perSecond;
    // A burst equal to the rate: no burst allowance at all (a limiter cannot have 0 points).
    const memory = new BurstyWindows(
      new FixedWindows(limits.perSecond, 1000, this.now),
      extra > 0 ? new FixedWindows(extra, BURST_WINDOW_S * 1000, this.now) : undefined,
    );
    const client = this.redis;
    const store = (keyPrefix: string, points: number, duration: number): RateLimiterAbstract =>
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
      });
    let redis: Consumer | undefined;
    if (client) {
      const base = store(`${this.prefix}rate:${id}:`, limits.perSecond, 1);
      redis = extra > 0 ? new BurstyRateLimiter(base, store(`${this.prefix}burst:${id}:`, extra, BURST_WINDOW_S)) : base;
    }
    pair = { memory, redis };
    this.limiters.set(id, pair);
    return pair;
  }
}

function decision(window: { allowed: boolean; msBeforeNext: number }): RateDecision {
  return window.allowed ? { allowed: true, retryAfterMs: 0 } : { allowed: false, retryAfterMs: Math.max(1, window.msBeforeNext) };
}
