/**
 * The limits of one API key: its own (api_keys columns) where set, else the configured defaults.
 * 0 turns a limit off.
 */
import type { Config } from '../config.js';

export interface KeyLimitFields {
  /** Requests per second on average; null: RATE_LIMIT_PER_SECOND. */
  rate_limit_per_second: number | null;
  /** Requests a quiet key may send at once; null: RATE_LIMIT_BURST. */
  rate_limit_burst: number | null;
  /** Uncached queries running at once; null: MAX_CONCURRENT_QUERIES. */
  max_concurrent_queries: number | null;
  /** Milliseconds of query time the key's budget gains per second; null: QUERY_TIME_PER_SECOND_MS. */
  query_ms_per_second: number | null;
  /** Milliseconds of query time the budget holds at most; null: QUERY_TIME_BURST_MS. */
  query_ms_burst: number | null;
}

export interface KeyLimits {
  perSecond: number;
  burst: number;
  concurrentQueries: number;
  /** The query-time budget (queryTimeBudget.ts); 0 in either: no budget. */
  queryTime: QueryTimeLimits;
}

export interface QueryTimeLimits {
  /** Refill, ms of query time per second. */
  perSecond: number;
  /** Capacity, ms. */
  burst: number;
}

export const LIMIT_FIELDS = [
  'rate_limit_per_second',
  'rate_limit_burst',
  'max_concurrent_queries',
  'query_ms_per_second',
  'query_ms_burst',
] as const;

/** The largest value a limit field takes (the column is an integer). */
export const MAX_LIMIT = 1_000_000_000;

export function limitsOf(
  key: Partial<KeyLimitFields>,
  config: Pick<Config, 'rateLimitPerSecond' | 'rateLimitBurst' | 'maxConcurrentQueries' | 'queryTimePerSecondMs' | 'queryTimeBurstMs'>,
): KeyLimits {
  const perSecond = key.rate_limit_per_second ?? config.rateLimitPerSecond;
  // A burst below the rate would refuse requests the rate allows: it is at least the rate.
  const burst = Math.max(perSecond, key.rate_limit_burst ?? config.rateLimitBurst);
  return {
    perSecond,
    burst,
    concurrentQueries: key.max_concurrent_queries ?? config.maxConcurrentQueries,
    queryTime: {
      perSecond: key.query_ms_per_second ?? config.queryTimePerSecondMs,
      burst: key.query_ms_burst ?? config.queryTimeBurstMs,
    },
  };
}
