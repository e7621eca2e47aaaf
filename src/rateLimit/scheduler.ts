/**
 * Fair scheduling of uncached database queries (docs/API.md "Rate limits", docs/SCALING.md
 * "Sharing the database"): a work-conserving fair scheduler, in the manner of weighted fair
 * queueing or a warehouse sharing its slots among jobs.
 *
 * - The database has QUERY_SLOTS slots (queries running at once). A query takes one or waits.
 * - A key alone may take every slot: nothing refuses or slows a key while nobody else waits.
 * - A query that finds every slot taken waits in its key's queue, up to its own time limit
 *   (QUERY_TIMEOUT_MS), then runs with that limit. Only a queue longer than QUERY_QUEUE_LIMIT
 *   answers 429: that key is sending faster than anything could serve it.
 * - When a slot frees, it goes to the waiting key that is running the fewest queries, then to the
 *   one that used the least database time lately (decayed, half-life USAGE_HALF_LIFE_MS), then to
 *   the one waiting longest. So a key with one query waiting runs next even behind a key with
 *   fifty, and two busy keys converge to half of the slots each.
 * - A key running more than its share (slots / keys active) while another key is active runs
 *   without parallel workers (`serial`): workers take cores too, and the quiet key's query
 *   should find one.
 * - An explicit per-key cap (`max_concurrent_queries`) still binds, by queueing, not refusing.
 * - Background work (`runBackground`: the hourly split's hours, src/query/hourlyBackground.ts) has
 *   the lowest priority: it takes a free slot only while no user query that could take one waits
 *   (in any process), one background query at a time over all processes, always without parallel
 *   workers, and it does not count as another active key (a key alone keeps every protection
 *   unbound). A running background query is not stopped: its work comes in short pieces instead.
 *
 * With REDIS_URL every process sees one view: the running queries are leases in one sorted set
 * (`sched:run`, member `<key>|<lease>`, scored with the lease's end, so a process that dies frees
 * its slots when QUERY_TIMEOUT_MS has passed anyway), the keys waiting anywhere in another
 * (`sched:wait`, member `<key>|<process>`, refreshed while it waits), and the decayed usage in a
 * hash. A process hands its slots out through one Lua script that sees all three, so the global
 * number of slots holds and a slot goes to the most deserving key of every process: a process
 * whose own candidates are less deserving leaves the slot to the process that waits with a better
 * one (it polls every POLL_MS while it has waiters). Without Redis, or while Redis fails or is
 * slower than REDIS_WAIT_MS, the same rules run in this process alone, and nothing is refused
 * because Redis is down.
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redisClient.js';
import { withinRedisWait } from './redisWait.js';

/** What a query is given with its slot. */
export interface Grant {
  /** Run without parallel workers: the key is above its share while another key is active. */
  serial: boolean;
}

export interface SchedulerOptions {
  /** Queries running at once, over all keys (and all processes, with Redis). */
  slots: number;
  /** Queries one key may have waiting in this process before 429. */
  queueLimit: number;
  /** A lease ends this long after its start unless released (a dead process's slots come back). */
  leaseMs: number;
  now?: () => number;
}

/** The key's queue is full: it sends faster than the database could serve it. */
export class QueueFull extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} queries of this key waiting`);
  }
}

/** The query's time limit passed before a slot was free. */
export class QueueTimeout extends Error {
  constructor(readonly waitedMs: number) {
    super(`waited ${waitedMs} ms for a database slot`);
  }
}

/** The scheduler's key of background work (runBackground); no API key id has parentheses. */
export const BACKGROUND = '(background)';

/** Usage halves every this many ms: what a key ran a minute ago hardly counts against it now. */
export const USAGE_HALF_LIFE_MS = 10_000;
/** Between two tries for a slot held in another process (with Redis); a release in this process wakes at once. */
const POLL_MS = 15;
/** A process's mark that it has queries of a key waiting lasts this long unless refreshed (each poll). */
const WAIT_MARK_MS = 2_000;

interface Waiter {
  readonly keyId: string;
  readonly cap: number;
  readonly deadline: number;
  readonly enqueued: number;
  resolve(grant: { grant: Grant; release: (ms: number) => void }): void;
  reject(err: Error): void;
  timer?: NodeJS.Timeout;
}

interface Usage {
  ms: number;
  at: number;
}

function decayed(usage: Usage | undefined, now: number): number {
  if (!usage) return 0;
  return usage.ms * Math.pow(0.5, Math.max(0, now - usage.at) / USAGE_HALF_LIFE_MS);
}

// KEYS: run set, wait set, usage hash, caps hash.
// ARGV: now, slots, lease ms, wait mark ms, process id, usage half-life, the background key, then
// per candidate (in this process's order, background last): key, cap, lease id.
// Returns {} when no candidate may start now, else {key, lease member, serial (0/1)}.
// The background key is no active key (it makes nobody serial) and starts only while no other
// waiter anywhere could start.
const ACQUIRE = `
local now = tonumber(ARGV[1])
local slots = tonumber(ARGV[2])
local lease = tonumber(ARGV[3])
local mark = tonumber(ARGV[4])
local proc = ARGV[5]
local half = tonumber(ARGV[6])
local bg = ARGV[7]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
for i = 8, #ARGV, 3 do
  redis.call('ZADD', KEYS[2], now + mark, ARGV[i] .. '|' .. proc)
  redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
end
redis.call('PEXPIRE', KEYS[2], 600000)
redis.call('PEXPIRE', KEYS[4], 600000)
local running = {}
local total = 0
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local k = string.match(m, '^(.*)|[^|]*$')
  running[k] = (running[k] or 0) + 1
  total = total + 1
end
if total >= slots then return {} end
local function usage(k)
  local u = redis.call('HGET', KEYS[3], k)
  if not u then return 0 end
  local ms, at = string.match(u, '^([^@]*)@(.*)$')
  return tonumber(ms) * math.pow(0.5, math.max(0, now - tonumber(at)) / half)
end
local function rank(k)
  return (running[k] or 0) * 1e15 + usage(k)
end
local function capped(k, cap)
  return cap > 0 and (running[k] or 0) >= cap
end
local active = {}
local nactive = 0
for k, _ in pairs(running) do
  if k ~= bg then active[k] = true nactive = nactive + 1 end
end
local best = nil
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local k = string.match(m, '^(.*)|[^|]*$')
  if k ~= bg then
    if not active[k] then active[k] = true nactive = nactive + 1 end
    local cap = tonumber(redis.call('HGET', KEYS[4], k) or '0')
    if not capped(k, cap) then
      local r = rank(k)
      if best == nil or r < best then best = r end
    end
  end
end
for i = 8, #ARGV, 3 do
  local k = ARGV[i]
  local allowed
  if k == bg then allowed = best == nil else allowed = best == nil or rank(k) <= best + 1 end
  if allowed and not capped(k, tonumber(ARGV[i + 1])) then
    local member = k .. '|' .. ARGV[i + 2]
    redis.call('ZADD', KEYS[1], now + lease, member)
    redis.call('PEXPIRE', KEYS[1], lease)
    local mine = (running[k] or 0) + 1
    local serial = 0
    if k == bg or (nactive > 1 and mine > slots / nactive) then serial = 1 end
    return {k, member, serial}
  end
end
return {}`;

// KEYS: run set, usage hash. ARGV: lease member, key, ms, now, half-life.
const RELEASE = `
redis.call('ZREM', KEYS[1], ARGV[1])
local now = tonumber(ARGV[4])
local u = redis.call('HGET', KEYS[2], ARGV[2])
local before = 0
if u then
  local ms, at = string.match(u, '^([^@]*)@(.*)$')
  before = tonumber(ms) * math.pow(0.5, math.max(0, now - tonumber(at)) / tonumber(ARGV[5]))
end
redis.call('HSET', KEYS[2], ARGV[2], tostring(before + tonumber(ARGV[3])) .. '@' .. ARGV[4])
redis.call('PEXPIRE', KEYS[2], 600000)
return 1`;

export class FairScheduler {
  /** Waiting queries per key, oldest first; a Map keeps the order keys started waiting in. */
  private readonly queues = new Map<string, Waiter[]>();
  /** Queries of this process running, per key. */
  private readonly running = new Map<string, number>();
  private runningTotal = 0;
  /** Decayed database time per key in this process (the view without Redis). */
  private readonly usage = new Map<string, Usage>();
  private readonly process = randomUUID();
  private readonly now: () => number;
  private pumping = false;
  private dirty = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly redis: RedisClient | undefined,
    private readonly prefix: string,
    private readonly options: SchedulerOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Queries waiting in this process (all keys). */
  get waiting(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.length;
    return n;
  }

  /** Queries of this process holding a slot. */
  get busy(): number {
    return this.runningTotal;
  }

  /**
   * Runs `fn` in a slot for `keyId` once one is free, waiting at most `timeLimitMs` for it. `cap`:
   * the key's explicit limit of queries at once (0: none). QueueFull or QueueTimeout when it cannot run.
   */
  async run<T>(keyId: string, cap: number, timeLimitMs: number, fn: (grant: Grant) => Promise<T>): Promise<T> {
    const queue = this.queues.get(keyId);
    // The exact bound is applied once a query is known to wait (trimQueues); the queue also holds
    // queries the dispatch has not reached yet, at most one per slot.
    if (queue && queue.length >= this.options.queueLimit + this.options.slots) throw new QueueFull(this.options.queueLimit);
    const enqueued = this.now();
    const { grant, release } = await new Promise<{ grant: Grant; release: (ms: number) => void }>((resolve, reject) => {
      const waiter: Waiter = { keyId, cap, deadline: enqueued + timeLimitMs, enqueued, resolve, reject };
      waiter.timer = setTimeout(() => this.expire(waiter), timeLimitMs);
      if (keyId === BACKGROUND) waiter.timer.unref(); // no request waits on it: a stopping process need not
      if (queue) queue.push(waiter);
      else this.queues.set(keyId, [waiter]);
      this.kick();
    });
    const started = this.now();
    try {
      return await fn(grant);
    } finally {
      release(this.now() - started);
    }
  }

  private expire(waiter: Waiter): void {
    const queue = this.queues.get(waiter.keyId);
    const i = queue?.indexOf(waiter) ?? -1;
    if (!queue || i < 0) return;
    queue.splice(i, 1);
    if (queue.length === 0) this.forgetQueue(waiter.keyId);
    waiter.reject(new QueueTimeout(this.now() - waiter.enqueued));
  }

  private forgetQueue(keyId: string): void {
    this.queues.delete(keyId);
    const client = this.redis;
    if (client?.isReady) void client.zRem(this.key('wait'), `${keyId}|${this.process}`).catch(() => undefined);
  }

  /**
   * Runs background work in a slot once no user query that could take one waits (see the top of
   * this file), waiting at most `timeLimitMs`; always serial, one at a time over all processes.
   */
  runBackground<T>(timeLimitMs: number, fn: (grant: Grant) => Promise<T>): Promise<T> {
    return this.run(BACKGROUND, 1, timeLimitMs, fn);
  }

  /** Starts the dispatch loop unless it runs; wakes it when it sleeps, or makes it look again before it does. */
  private kick(): void {
    this.dirty = true;
    if (this.wake) {
      const wake = this.wake;
      this.wake = undefined;
      wake();
    }
    if (this.pumping) return;
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
      if (this.queues.size > 0) this.kick();
    });
  }

  /** Hands out slots while there are waiters and slots; sleeps until a release (or a poll, with Redis). */
  private async pump(): Promise<void> {
    while (this.queues.size > 0) {
      // A release or a new query while the script runs sets it again: then look again before sleeping.
      this.dirty = false;
      const candidates = this.candidates();
      const shared = this.redis?.isReady === true;
      const granted = candidates.length === 0 ? undefined : await this.acquire(candidates);
      if (granted) {
        this.start(granted.keyId, granted.serial, granted.release);
        continue;
      }
      if (this.dirty) continue;
      this.trimQueues();
      // Nothing may start: wait for a release here, or (another process may free a slot) a poll.
      await new Promise<void>((resolve) => {
        const timer = shared ? setTimeout(resolve, POLL_MS) : undefined;
        this.wake = () => {
          if (timer) clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** Nothing can start now, so every queued query waits: a key with more than QUERY_QUEUE_LIMIT waiting has its newest refused. */
  private trimQueues(): void {
    for (const [keyId, queue] of this.queues) {
      if (queue.length <= this.options.queueLimit) continue;
      for (const waiter of queue.splice(this.options.queueLimit)) {
        clearTimeout(waiter.timer);
        waiter.reject(new QueueFull(this.options.queueLimit));
      }
      if (queue.length === 0) this.forgetQueue(keyId);
    }
  }

  /** Keys waiting in this process, most deserving first: fewest running, least used lately, waiting longest; background last. */
  private candidates(): Array<{ keyId: string; cap: number }> {
    const now = this.now();
    return [...this.queues.entries()]
      .map(([keyId, queue]) => ({
        keyId,
        cap: queue[0].cap,
        background: keyId === BACKGROUND ? 1 : 0,
        running: this.running.get(keyId) ?? 0,
        usage: decayed(this.usage.get(keyId), now),
        since: queue[0].enqueued,
      }))
      .sort((a, b) => a.background - b.background || a.running - b.running || a.usage - b.usage || a.since - b.since)
      .map(({ keyId, cap }) => ({ keyId, cap }));
  }

  private async acquire(
    candidates: Array<{ keyId: string; cap: number }>,
  ): Promise<{ keyId: string; serial: boolean; release: (ms: number) => void } | undefined> {
    const client = this.redis;
    if (client?.isReady) {
      const now = this.now();
      const args = [String(now), String(this.options.slots), String(this.options.leaseMs), String(WAIT_MARK_MS), this.process];
      args.push(String(USAGE_HALF_LIFE_MS), BACKGROUND);
      for (const c of candidates) args.push(c.keyId, String(c.cap), randomUUID());
      const keys = [this.key('run'), this.key('wait'), this.key('usage'), this.key('caps')];
      const attempt = client.eval(ACQUIRE, { keys, arguments: args }) as Promise<unknown>;
      const reply = await withinRedisWait(attempt).catch(() => null);
      if (Array.isArray(reply)) {
        if (reply.length === 0) return undefined;
        const [keyId, member, serial] = reply as [string, string, number];
        return { keyId, serial: serial === 1, release: (ms) => this.releaseShared(member, keyId, ms) };
      }
      // Redis did not answer in time: decide here. A lease the late answer took anyway is given back.
      attempt.then(
        (late) => Array.isArray(late) && late.length > 0 && this.releaseShared(String(late[1]), String(late[0]), 0),
        () => undefined,
      );
    }
    return this.acquireLocal(candidates);
  }

  /** The same rules as the script, on this process's view alone (background is last among the candidates). */
  private acquireLocal(
    candidates: Array<{ keyId: string; cap: number }>,
  ): { keyId: string; serial: boolean; release: (ms: number) => void } | undefined {
    if (this.runningTotal >= this.options.slots) return undefined;
    const pick = candidates.find((c) => c.cap <= 0 || (this.running.get(c.keyId) ?? 0) < c.cap);
    if (!pick) return undefined;
    if (pick.keyId === BACKGROUND) return { keyId: pick.keyId, serial: true, release: () => undefined };
    const active = new Set([...this.running.keys(), ...this.queues.keys()].filter((k) => k !== BACKGROUND)).size;
    const mine = (this.running.get(pick.keyId) ?? 0) + 1;
    return { keyId: pick.keyId, serial: active > 1 && mine > this.options.slots / active, release: () => undefined };
  }

  /** Gives the head waiter of `keyId` its slot. */
  private start(keyId: string, serial: boolean, releaseShared: (ms: number) => void): void {
    const queue = this.queues.get(keyId);
    const waiter = queue?.shift();
    if (!queue || !waiter) {
      releaseShared(0);
      return;
    }
    if (queue.length === 0) this.forgetQueue(keyId);
    clearTimeout(waiter.timer);
    this.running.set(keyId, (this.running.get(keyId) ?? 0) + 1);
    this.runningTotal += 1;
    let released = false;
    const release = (ms: number) => {
      if (released) return;
      released = true;
      const left = (this.running.get(keyId) ?? 1) - 1;
      if (left <= 0) this.running.delete(keyId);
      else this.running.set(keyId, left);
      this.runningTotal -= 1;
      const at = this.now();
      this.usage.set(keyId, { ms: decayed(this.usage.get(keyId), at) + ms, at });
      if (this.usage.size > 10_000) this.usage.delete(this.usage.keys().next().value!);
      releaseShared(ms);
      if (this.queues.size > 0) this.kick();
    };
    waiter.resolve({ grant: { serial }, release });
  }

  private releaseShared(member: string, keyId: string, ms: number): void {
    const client = this.redis;
    if (!client?.isReady) return;
    const args = [member, keyId, String(Math.round(ms)), String(this.now()), String(USAGE_HALF_LIFE_MS)];
    void client.eval(RELEASE, { keys: [this.key('run'), this.key('usage')], arguments: args }).catch(() => undefined);
  }

  private key(name: string): string {
    return `${this.prefix}sched:${name}`;
  }
}
