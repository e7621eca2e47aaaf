/**
 * Limits per API key (docs/API.md, "Rate limits"): the request rate, checked by a step of the
 * request pipeline (rateLimitStep) so cache hits count too; and, around the database query only
 * (EndpointQueryService), so a cache hit is never held or charged, the query-time budget and the
 * uncached queries running at once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from 'redis';
import type { RedisClient } from './redisClient.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { TooManyRequestsError } from '../errors.js';
import { limitsOf, type KeyLimitFields } from './limits.js';
import { QuerySlots, QuerySlotsFull } from './querySlots.js';
import { QueryTimeBudget } from './queryTimeBudget.js';
import { RequestRateLimiter } from './requestRate.js';

export interface LimitedKey extends Partial<KeyLimitFields> {
  id: string;
}

export class KeyLimiter {
  private constructor(
    private readonly config: Config,
    private readonly rate: RequestRateLimiter,
    private readonly slots: QuerySlots,
    private readonly budget: QueryTimeBudget,
    private readonly client: RedisClient | undefined,
  ) {}

  /**
   * With REDIS_URL: a Redis connection of its own (never waited for: the in-process limits decide until it is up).
   * `now`: the clock of the query-time budget (tests move their own).
   */
  static open(config: Config, logger: Logger, prefix = 'lq:limit:', now: () => number = Date.now): KeyLimiter {
    let client: RedisClient | undefined;
    if (config.redisUrl) {
      client = createClient({
        url: config.redisUrl,
        disableOfflineQueue: true,
        socket: { connectTimeout: 1000, keepAlive: true, noDelay: true, reconnectStrategy: (n: number) => Math.min(50 * 2 ** n, 2000) },
      });
      let lastLog = 0;
      client.on('error', (err: Error) => {
        if (Date.now() - lastLog < 10_000) return;
        lastLog = Date.now();
        logger.warn({ err: err.message }, 'rate limits: Redis unavailable; limits are counted per process meanwhile');
      });
      client.connect().catch(() => undefined);
    }
    return new KeyLimiter(
      config,
      new RequestRateLimiter(client, prefix),
      new QuerySlots(client, prefix, config.queryTimeoutMs, config.querySlotWaitMs),
      new QueryTimeBudget(client, prefix, now),
      client,
    );
  }

  /** Counts one request of `key`; TooManyRequestsError (429, Retry-After) when it is over its rate. */
  async request(key: LimitedKey): Promise<void> {
    const decision = await this.rate.consume(key.id, limitsOf(key, this.config));
    if (decision.allowed) return;
    const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    throw new TooManyRequestsError(`This API key is over its request rate; retry in ${seconds} s.`, seconds, 'rateLimited');
  }

  /**
   * Runs an uncached query of `key` within its query-time budget and its concurrent-query limit
   * (undefined: a warming run, not limited). The budget is checked first, so a key in debt does not
   * take a slot; the time charged is the query's own, not its wait for a slot.
   */
  async query<T>(key: LimitedKey | undefined, fn: () => Promise<T>): Promise<T> {
    if (key === undefined) return fn();
    const limits = limitsOf(key, this.config);
    let budget = await this.budget.check(key.id, limits.queryTime);
    if (!budget.allowed) {
      // As a query over its slots does, it waits up to QUERY_SLOT_WAIT_MS: a short debt is waited out, and a key
      // far in debt gets its 429 only then, so an abusive client that retries at once sends a request per
      // client per wait, not thousands of refused ones a second that take the CPU other keys need (BENCHMARKS.md,
      // "Rate limits").
      // A few ms past the refill: a timer may fire a little before the clock the bucket reads reaches its end.
      const wait = Math.min(budget.retryAfterMs + 5, this.config.querySlotWaitMs);
      await sleep(wait);
      budget =
        wait >= budget.retryAfterMs
          ? await this.budget.check(key.id, limits.queryTime)
          : { ...budget, retryAfterMs: budget.retryAfterMs - wait };
    }
    if (!budget.allowed) {
      const seconds = Math.max(1, Math.ceil(budget.retryAfterMs / 1000));
      throw new TooManyRequestsError(
        `This API key has used up its database query time; retry in ${seconds} s.`,
        seconds,
        'queryTimeExhausted',
      );
    }
    const timed = () => this.budget.timed(key.id, limits.queryTime, fn);
    return this.slots.run(key.id, limits.concurrentQueries, timed).catch((err: unknown) => {
      if (!(err instanceof QuerySlotsFull)) throw err;
      throw new TooManyRequestsError(
        `This API key already runs ${err.limit} queries; wait for one to finish or retry in 1 s.`,
        1,
        'tooManyQueries',
      );
    });
  }

  /** As the cache's Redis client: a Redis that is down or hangs must not hold the stop up. */
  async close(): Promise<void> {
    const client = this.client;
    if (!client?.isOpen) return;
    if (!client.isReady) return client.destroy();
    await Promise.race([client.close().catch(() => undefined), sleep(500)]);
    if (client.isOpen) client.destroy();
  }
}
