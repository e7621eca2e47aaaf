/**
 * Limits per API key (docs/API.md, "Rate limits"): the request rate, checked by a step of the
 * request pipeline (rateLimitStep) so cache hits count too; and, around the database query only
 * (EndpointQueryService), so a cache hit is never held or charged, the fair scheduler that shares
 * the database's slots among the keys that want them (scheduler.ts), and the hard caps an operator
 * sets on a key (a query-time budget, queries at once).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from 'redis';
import type { RedisClient } from './redisClient.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { TooManyRequestsError, UnavailableError } from '../errors.js';
import { limitsOf, type KeyLimitFields } from '../auth/keyLimits.js';
import { FairScheduler, QueueFull, QueueTimeout, type Grant } from './scheduler.js';
import { QueryTimeBudget } from './queryTimeBudget.js';
import { RequestRateLimiter } from './requestRate.js';

export interface LimitedKey extends Partial<KeyLimitFields> {
  id: string;
}

/** The scheduler's key for cache warming runs: one more key with its share, never refused. */
const WARMING = '(warming)';
/** How long background work waits for a slot while user queries keep them busy before it gives up (it is tried again later). */
const BACKGROUND_WAIT_MS = 10 * 60_000;
/** How long a query of a key in debt of its hard query-time cap waits before its 429. */
const BUDGET_REFUSAL_WAIT_MS = 1_000;

export class KeyLimiter {
  private constructor(
    private readonly config: Config,
    private readonly rate: RequestRateLimiter,
    private readonly scheduler: FairScheduler,
    private readonly budget: QueryTimeBudget,
    private readonly client: RedisClient | undefined,
  ) {}

  /**
   * With REDIS_URL: a Redis connection of its own (never waited for: the in-process limits decide until it is up).
   * `now`: the clock of the in-process request windows and of the query-time budget (tests move their own).
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
      new RequestRateLimiter(client, prefix, now),
      new FairScheduler(client, prefix, {
        slots: config.querySlots,
        queueLimit: config.queryQueueLimit,
        // A lease outlives the query's time limit: past it the query has been cancelled anyway.
        leaseMs: config.queryTimeoutMs + 10_000,
      }),
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
   * Runs an uncached query of `key` (undefined: a warming run) in a slot of the fair scheduler,
   * waiting for one at most the query's time limit: `fn` is told whether to run without parallel
   * workers. A key's explicit query-time budget is checked first, so a key in
   * debt does not take a slot; the time charged is the query's own, not its wait.
   */
  async query<T>(key: LimitedKey | undefined, fn: (grant: Grant) => Promise<T>): Promise<T> {
    const timeLimitMs = this.config.queryTimeoutMs;
    if (key === undefined) return this.schedule(WARMING, 0, timeLimitMs, fn);
    const limits = limitsOf(key, this.config);
    await this.checkBudget(key.id, limits);
    return this.schedule(key.id, limits.concurrentQueries, timeLimitMs, (grant) =>
      this.budget.timed(key.id, limits.queryTime, () => fn(grant)),
    );
  }

  /**
   * Runs background work (the hourly split's hours, src/query/hourlyBackground.ts) at the lowest
   * priority: in a free slot only while no user query that could take one waits, one at a time
   * over all processes, without parallel workers (scheduler.ts). No key's limits apply to it.
   */
  background<T>(fn: (grant: Grant) => Promise<T>): Promise<T> {
    return this.scheduler.runBackground(BACKGROUND_WAIT_MS, fn);
  }

  /** Queries waiting for a slot and queries holding one, in this process (metrics). */
  get load(): { waiting: number; busy: number } {
    return { waiting: this.scheduler.waiting, busy: this.scheduler.busy };
  }

  private schedule<T>(keyId: string, cap: number, timeLimitMs: number, fn: (grant: Grant) => Promise<T>): Promise<T> {
    return this.scheduler.run(keyId, cap, timeLimitMs, fn).catch((err: unknown) => {
      if (err instanceof QueueFull) {
        throw new TooManyRequestsError(
          `This API key already has ${err.limit} queries waiting for the database; retry in 1 s.`,
          1,
          'tooManyQueries',
        );
      }
      // The database did not free a slot within the query's whole time limit: it is overloaded or stalled
      // (the queries holding the slots are), so the answer is the one for a database that cannot serve now.
      if (err instanceof QueueTimeout)
        throw new UnavailableError(
          `The query waited ${timeLimitMs} ms (its time limit) for a database slot without getting one; the database is busy or not answering. Retry shortly.`,
        );
      throw err;
    });
  }

  /**
   * An operator's hard cap on a key's query time (its own query_ms_* fields, or QUERY_TIME_* set
   * for every key): 429 while the key is in debt. A short debt is waited out (up to
   * BUDGET_REFUSAL_WAIT_MS), and a key far in debt gets its 429 only then, so an abusive client
   * that retries at once sends a request per client per wait, not thousands of refused ones a
   * second that take the CPU other keys need (BENCHMARKS.md, "Rate limits").
   */
  private async checkBudget(keyId: string, limits: ReturnType<typeof limitsOf>): Promise<void> {
    let budget = await this.budget.check(keyId, limits.queryTime);
    if (!budget.allowed) {
      // A few ms past the refill: a timer may fire a little before the clock the bucket reads reaches its end.
      const wait = Math.min(budget.retryAfterMs + 5, BUDGET_REFUSAL_WAIT_MS);
      await sleep(wait);
      budget =
        wait >= budget.retryAfterMs
          ? await this.budget.check(keyId, limits.queryTime)
          : { ...budget, retryAfterMs: budget.retryAfterMs - wait };
    }
    if (budget.allowed) return;
    const seconds = Math.max(1, Math.ceil(budget.retryAfterMs / 1000));
    throw new TooManyRequestsError(
      `This API key has used up its database query time; retry in ${seconds} s.`,
      seconds,
      'queryTimeExhausted',
    );
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
