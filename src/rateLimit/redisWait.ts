/**
 * How long a limiter waits for Redis before it decides in this process (src/rateLimit/): a
 * request's budget is milliseconds, and a Redis that is down or slow must never hold requests.
 */
export const REDIS_WAIT_MS = 250;

/**
 * `promise`, or when it has not settled within `ms`: `instead()` if given, else a rejection.
 * A rejection of `promise` itself (a refusal, say) passes through either way.
 */
export function withinRedisWait<T>(promise: Promise<T>, instead?: () => Promise<T>, ms = REDIS_WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => (instead ? resolve(instead()) : reject(new Error(`Redis did not answer within ${ms} ms`))), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
