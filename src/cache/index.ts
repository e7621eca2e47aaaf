/**
 * The result cache of one service instance: Redis when `REDIS_URL` is set (shared by replicas),
 * else an in-process LRU with the same behaviour.
 *
 *   const cache = await createResultCache(config, metrics, logger);
 *   const { body, status } = await cache.fetch({ key, ttlSeconds: 900, warmPeriodSeconds: 300, spec }, () => runQuery());
 */
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { CircuitBreaker, unguarded } from './guard.js';
import { MemoryStore, type MemoryStoreOptions } from './memoryStore.js';
import { RedisStore } from './redisStore.js';
import { StoreResultCache } from './resultCache.js';

export type { CacheOutcome, CacheRequest, ResultCache, WarmRunner, WarmSpec } from './types.js';
export { StoreResultCache } from './resultCache.js';

export interface ResultCacheOptions {
  /** Prefix of every Redis key (default `lq:`); tests sharing one Redis use their own. */
  namespace?: string;
  /** Time budget of one Redis call (default: the config's CACHE_REDIS_TIMEOUT_MS, 50 ms). */
  redisTimeoutMs?: number;
  /** How long Redis is skipped after a failure (default 1000 ms). */
  breakerOpenMs?: number;
  memory?: MemoryStoreOptions;
  /** The clock of lifetimes and warming (default Date.now): tests move theirs by hand instead of sleeping. */
  now?: () => number;
}

export async function createResultCache(
  config: Config,
  metrics: Metrics,
  logger: Logger,
  options: ResultCacheOptions = {},
): Promise<StoreResultCache> {
  const cacheOptions = {
    queryTimeoutMs: config.queryTimeoutMs,
    warming: { tick: config.warmingTick, scale: config.warmingScale },
    now: options.now,
  };
  if (!config.redisUrl) {
    const memory = { now: options.now, ...options.memory };
    return new StoreResultCache(new MemoryStore(memory), unguarded, metrics, logger, cacheOptions);
  }
  const store = await RedisStore.open({ url: config.redisUrl, namespace: options.namespace, logger });
  const breaker = new CircuitBreaker({
    timeoutMs: options.redisTimeoutMs ?? config.cacheRedisTimeoutMs,
    openMs: options.breakerOpenMs ?? 1000,
    onOpen: (err) => logger.warn({ err: (err as Error).message }, 'cache: Redis call failed; answering without the cache for a moment'),
  });
  return new StoreResultCache(store, breaker, metrics, logger, cacheOptions);
}
