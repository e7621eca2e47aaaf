/**
 * A hard cap on database query time per API key (a key's query_ms_* fields, or
 * QUERY_TIME_PER_SECOND_MS and QUERY_TIME_BURST_MS for every key; docs/API.md "Rate limits"): a
 * token bucket counted in milliseconds. It is off by default: the fair scheduler (scheduler.ts)
 * already lowers the priority of a key that used much time while others wait, and never holds a
 * key back while nobody else does. The cap is for operators who want a key to stop at a fixed
 * amount whatever the database has free.
 *
 * An uncached query is checked before it runs (balance ≤ 0: refused) and charged its wall
 * duration once it ends, whether it succeeded or failed. The cost is only known afterwards, so the
 * balance may go below zero, and that debt carries over: a key that starts many long queries at
 * once pays for all of them before it runs another. The bucket refills continuously at `perSecond`
 * ms per second up to `burst` ms.
 *
 * rate-limiter-flexible (the request rate, requestRate.ts) takes points before the work, within
 * fixed windows, and never lets a balance go below zero: it has no bucket that is charged after
 * the fact and carries debt. Hence two small Lua scripts of our own on one hash per key (balance,
 * time of the last refill): CHECK refills and returns the balance without writing; CHARGE refills,
 * subtracts and stores. The hash expires when the bucket would be full again, so idle keys vanish
 * (a missing hash is a full bucket). The time is the caller's clock, as for the query slots; a
 * clock behind the stored time refills nothing rather than draining.
 *
 * Without Redis, or while Redis fails or is slower than REDIS_WAIT_MS, a bucket in this process
 * decides: the budget then holds per process, and a query is never refused because Redis is
 * down. Every charge is also made to that bucket, so a key in debt does not start over with a
 * full budget when Redis goes away.
 */
import { LRUCache } from 'lru-cache';
import { LRU_READ } from '../lruRead.js';
import type { RedisClient } from './redisClient.js';
import { withinRedisWait } from './redisWait.js';
import type { QueryTimeLimits } from '../auth/keyLimits.js';

const REFILL = `
local now = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'balance', 'at')
local balance = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
if now > at then
  balance = balance + (now - at) * rate / 1000
  at = now
end
if balance > burst then balance = burst end
`;

const CHECK = `${REFILL}
return tostring(balance)`;

const CHARGE = `${REFILL}
balance = balance - tonumber(ARGV[4])
redis.call('HSET', KEYS[1], 'balance', tostring(balance), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.min(2592000000, math.ceil((burst - balance) * 1000 / rate) + 1000))
return tostring(balance)`;

/**
 * Keys kept in each in-process map. A bucket leaves when it is full again (its ttl: a missing
 * bucket is full), a refusal when it ends; past this many busy keys the least recent go first.
 */
const LOCAL_MAX_KEYS = 10_000;

export interface BudgetDecision {
  allowed: boolean;
  /** When refused: how long until the balance is positive again. */
  retryAfterMs: number;
}

interface LocalBucket {
  balance: number;
  at: number;
}

/** 0 in either field turns the budget off. */
export function budgetIsOn(limits: QueryTimeLimits): boolean {
  return limits.perSecond > 0 && limits.burst > 0;
}

export class QueryTimeBudget {
  private readonly local: LRUCache<string, LocalBucket>;
  /**
   * Keys refused, until when, and under which limits: nothing but time raises a balance (charges
   * only lower it), so a refused key stays refused until then unless its limits change, and its
   * requests meanwhile are answered without Redis.
   */
  private readonly refused: LRUCache<string, { until: number; limits: string }>;

  constructor(
    private readonly redis: RedisClient | undefined,
    private readonly prefix: string,
    /** The clock of refills and of query durations, in ms; tests move their own. */
    private readonly now: () => number = Date.now,
  ) {
    const options = { max: LOCAL_MAX_KEYS, ttlResolution: 0, perf: { now } };
    this.local = new LRUCache(options);
    this.refused = new LRUCache(options);
  }

  /** Whether `keyId` may start a query now: its balance, refilled, is above zero. */
  async check(keyId: string, limits: QueryTimeLimits): Promise<BudgetDecision> {
    if (!budgetIsOn(limits)) return { allowed: true, retryAfterMs: 0 };
    const at = this.now();
    const limitsId = `${limits.perSecond}/${limits.burst}`;
    const refused = this.refused.get(keyId, LRU_READ);
    if (refused !== undefined) {
      if (refused.until > at && refused.limits === limitsId) return { allowed: false, retryAfterMs: refused.until - at };
      this.refused.delete(keyId);
    }
    const balance = (await this.remote(CHECK, keyId, limits, at)) ?? this.localBalance(keyId, limits, at);
    if (balance > 0) return { allowed: true, retryAfterMs: 0 };
    // The first whole millisecond after which the refill has brought the balance above zero.
    const retryAfterMs = Math.floor((-balance * 1000) / limits.perSecond) + 1;
    this.refused.set(keyId, { until: at + retryAfterMs, limits: limitsId }, { ttl: retryAfterMs });
    return { allowed: false, retryAfterMs };
  }

  /** Runs `fn` and charges its duration to `keyId`, whether it succeeds or fails. */
  async timed<T>(keyId: string, limits: QueryTimeLimits, fn: () => Promise<T>): Promise<T> {
    if (!budgetIsOn(limits)) return fn();
    const started = this.now();
    try {
      return await fn();
    } finally {
      // Not awaited: the answer (and the caller's query slot) need not wait for Redis. The charge is in the
      // in-process bucket at once, and its script is sent before any later check on the same connection.
      void this.charge(keyId, limits, this.now() - started);
    }
  }

  /** Takes `ms` of query time from `keyId`'s balance, which may go below zero. */
  async charge(keyId: string, limits: QueryTimeLimits, ms: number): Promise<void> {
    if (!budgetIsOn(limits) || !(ms > 0)) return;
    const at = this.now();
    this.chargeLocal(keyId, limits, at, ms);
    await this.remote(CHARGE, keyId, limits, at, ms);
  }

  /** The balance after the script ran in Redis; undefined when Redis is not there or not in time. */
  private async remote(script: string, keyId: string, limits: QueryTimeLimits, at: number, cost?: number): Promise<number | undefined> {
    const client = this.redis;
    if (!client?.isReady) return undefined;
    const args = [String(at), String(limits.perSecond), String(limits.burst)];
    if (cost !== undefined) args.push(String(cost));
    // A charge that answers late still lands: the time was spent, and the local bucket has it too.
    const reply = await withinRedisWait(client.eval(script, { keys: [`${this.prefix}querytime:${keyId}`], arguments: args })).catch(
      () => undefined,
    );
    const balance = typeof reply === 'string' ? Number(reply) : NaN;
    return Number.isFinite(balance) ? balance : undefined;
  }

  private localBalance(keyId: string, limits: QueryTimeLimits, at: number): number {
    const bucket = this.local.get(keyId, LRU_READ);
    if (!bucket) return limits.burst;
    const balance = Math.min(limits.burst, bucket.balance + (Math.max(0, at - bucket.at) * limits.perSecond) / 1000);
    if (balance >= limits.burst) this.local.delete(keyId);
    return balance;
  }

  private chargeLocal(keyId: string, limits: QueryTimeLimits, at: number, ms: number): void {
    const previous = this.local.get(keyId, LRU_READ)?.at ?? at;
    const balance = this.localBalance(keyId, limits, at) - ms;
    const since = Math.max(at, previous);
    const msUntilFull = ((limits.burst - balance) * 1000) / limits.perSecond;
    this.local.set(keyId, { balance, at: since }, { ttl: Math.max(1, Math.ceil(since - at + msUntilFull)) });
  }
}
