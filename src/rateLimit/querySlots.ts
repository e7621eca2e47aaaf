/**
 * Uncached queries of one API key running at once (MAX_CONCURRENT_QUERIES, docs/API.md "Rate
 * limits"). A query over the limit waits up to QUERY_SLOT_WAIT_MS for a slot, then is refused
 * (429): short dashboards bursts queue, a key that keeps the database busy is told to back off.
 *
 * With REDIS_URL the slots are shared by every service process: one sorted set per key whose
 * members are the running queries, scored with the time their lease ends. A lease ends at
 * QUERY_TIMEOUT_MS plus a margin, past which the query has been cancelled anyway, so a process
 * that dies holding slots loses them at the latest then. Taking a slot is one Lua script
 * (drop ended leases, count, add), so two processes cannot both take the last one.
 *
 * Without Redis, or while Redis fails, the slots are counted in this process: the limit then
 * holds per process, and a query is never refused because Redis is down.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redisClient.js';
import { withinRedisWait } from './redisWait.js';

const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return 1
end
return 0`;

/** Between two tries for a slot while waiting; a slot frees when a query ends, typically in ms. */
const POLL_MS = 20;

export class QuerySlotsFull extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} queries of this key at once`);
  }
}

export class QuerySlots {
  private readonly local = new Map<string, number>();
  private readonly leaseMs: number;

  constructor(
    private readonly redis: RedisClient | undefined,
    private readonly prefix: string,
    queryTimeoutMs: number,
    private readonly waitMs: number,
  ) {
    this.leaseMs = queryTimeoutMs + 10_000;
  }

  /** Runs `fn` holding one of `limit` slots of `keyId` (0: no limit); QuerySlotsFull when none frees in time. */
  async run<T>(keyId: string, limit: number, fn: () => Promise<T>): Promise<T> {
    if (limit <= 0) return fn();
    const release = await this.acquire(keyId, limit);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  private async acquire(keyId: string, limit: number): Promise<() => void> {
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const release = await this.tryAcquire(keyId, limit);
      if (release) return release;
      if (Date.now() + POLL_MS > deadline) throw new QuerySlotsFull(limit);
      await sleep(POLL_MS);
    }
  }

  private async tryAcquire(keyId: string, limit: number): Promise<(() => void) | undefined> {
    const client = this.redis;
    if (client?.isReady) {
      const key = `${this.prefix}slots:${keyId}`;
      const member = randomUUID();
      const now = Date.now();
      const release = () => void client.zRem(key, member).catch(() => undefined);
      const attempt = client.eval(ACQUIRE, {
        keys: [key],
        arguments: [String(now), String(limit), String(now + this.leaseMs), member, String(this.leaseMs)],
      });
      const taken = await withinRedisWait(attempt).catch(() => undefined);
      if (taken === 1) return release;
      if (taken === 0) return undefined;
      // Redis did not answer in time: count in this process. A slot the late answer took
      // anyway is given back, or it would stay taken until its lease ends.
      attempt.then(
        (late) => late === 1 && release(),
        () => undefined,
      );
    }
    const running = this.local.get(keyId) ?? 0;
    if (running >= limit) return undefined;
    this.local.set(keyId, running + 1);
    return () => {
      const left = (this.local.get(keyId) ?? 1) - 1;
      if (left <= 0) this.local.delete(keyId);
      else this.local.set(keyId, left);
    };
  }
}
