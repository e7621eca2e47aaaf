/**
 * The result cache over a store (Redis or in-process):
 *
 * - HIT: one GET; the stored bytes are returned as they are.
 * - MISS: single flight. Within a process, concurrent lookups of one key share one promise.
 *   Across processes, `SET lock:<key> NX PX` picks one computer; the others poll for the value
 *   (backing off to 50 ms) and take the lock themselves if it disappears without a value, or
 *   compute on their own once a query time limit has passed.
 * - Store down or slow: every store call is guarded (time budget + circuit breaker); on any
 *   failure the request computes directly and counts `error`. No request fails or stalls
 *   because of the cache.
 * - Requests of a warmed key record "last requested" at most once a second per key and process.
 */
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { TooManyRequestsError } from '../errors.js';
import { LRU_READ } from '../lruRead.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { extraPutMs, type StoreGuard } from './guard.js';
import type { CacheStore, LiveRegistration } from './store.js';
import type { CacheOutcome, CacheRequest, ResultCache, WarmRunner } from './types.js';
import { Warmer, type WarmerOptions } from './warmer.js';

export interface StoreResultCacheOptions {
  /** The query time limit: bounds how long a request waits for another process's computation. */
  queryTimeoutMs: number;
  warming: WarmerOptions;
  /** The clock of lifetimes and warming registrations (default Date.now); tests move theirs by hand. */
  now?: () => number;
}

/** How long a body computed while the store was failing is reused by this process. */
const FALLBACK_MS = 5_000;
/** How long the last hit of a key may stand in for the store while it fails (within the key's lifetime). */
const FALLBACK_HIT_MS = 60_000;
const FALLBACK_MAX_KEYS = 1_000;
const FALLBACK_MAX_BODY = 1_000_000;
const FALLBACK_MAX_BYTES = 64 * 1024 * 1024;
/** A warmed key records its requests at most this often per process. */
const TOUCH_EVERY_MS = 1_000;
/** perf: every hit refreshes its fallback body; one options object, its ttl set before each call (lru-cache keeps none of it). */
const KEEP: { ttl: number } = { ttl: 0 };

type CacheEvent = 'hit' | 'miss' | 'bypass' | 'singleflight_wait' | 'error';
/** One label object per event, not one per request. */
const EVENT_LABELS: Record<CacheEvent, { event: CacheEvent }> = {
  hit: { event: 'hit' },
  miss: { event: 'miss' },
  bypass: { event: 'bypass' },
  singleflight_wait: { event: 'singleflight_wait' },
  error: { event: 'error' },
};

export class StoreResultCache implements ResultCache {
  private readonly inflight = new Map<string, Promise<CacheOutcome>>();
  private readonly now: () => number;
  /** Warmed keys whose request was recorded within the last TOUCH_EVERY_MS. */
  private readonly touched: LRUCache<string, true>;
  /** Bodies for computeWithoutCache, each for FALLBACK_MS or FALLBACK_HIT_MS within the key's lifetime. */
  private readonly fallback: LRUCache<string, string>;
  private readonly warmer: Warmer;
  private warming = false;

  constructor(
    private readonly store: CacheStore,
    private readonly guard: StoreGuard,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly options: StoreResultCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
    const perf = { now: this.now };
    this.touched = new LRUCache<string, true>({ max: 10_000, ttl: TOUCH_EVERY_MS, ttlResolution: 0, perf });
    this.fallback = new LRUCache<string, string>({
      max: FALLBACK_MAX_KEYS,
      maxSize: FALLBACK_MAX_BYTES,
      sizeCalculation: (body) => body.length || 1,
      ttl: FALLBACK_HIT_MS,
      ttlResolution: 0,
      perf,
    });
    this.warmer = new Warmer(store, guard, metrics, logger, { now: this.now, ...options.warming }, (spec) => this.runner(spec));
  }

  private runner: WarmRunner = () => Promise.reject(new Error('warming has not been started'));

  async fetch(request: CacheRequest, compute: () => Promise<string>): Promise<CacheOutcome> {
    if (request.ttlSeconds <= 0) {
      this.count('bypass');
      return { body: await compute(), status: 'MISS' };
    }
    const pending = this.inflight.get(request.key);
    if (pending) {
      let outcome: CacheOutcome;
      try {
        outcome = await pending;
      } catch (err) {
        // The request that computes refused by its own key's limits: that 429 is not this caller's, so it computes itself.
        if (err instanceof TooManyRequestsError) return this.fetch(request, compute);
        throw err;
      }
      this.count(outcome.status === 'HIT' ? 'hit' : 'singleflight_wait');
      return outcome;
    }
    const lookup = this.lookup(request, compute).finally(() => this.inflight.delete(request.key));
    this.inflight.set(request.key, lookup);
    return lookup;
  }

  async ready(): Promise<boolean | 'none'> {
    if (!this.store.remote) return 'none';
    return Promise.race([this.store.ping().catch(() => false), sleep(250).then(() => false)]);
  }

  startWarming(run: WarmRunner): void {
    this.runner = run;
    this.warming = true;
    this.warmer.start();
  }

  /** One warming pass now (tests; the schedule calls the same). */
  warmNow(now?: number): Promise<void> {
    return this.warming ? this.warmer.tick(now) : Promise.resolve();
  }

  async close(): Promise<void> {
    await this.warmer.stop();
    await Promise.allSettled([...this.inflight.values()]);
    await this.store.close();
  }

  private async lookup(request: CacheRequest, compute: () => Promise<string>): Promise<CacheOutcome> {
    const cached = await this.guard.run(() => this.store.get(request.key));
    if (!cached.ok) return this.computeWithoutCache(request, compute);
    if (cached.value !== null) {
      this.count('hit');
      this.touch(request);
      this.keep(request, cached.value, FALLBACK_HIT_MS);
      return { body: cached.value, status: 'HIT' };
    }
    this.count('miss');

    const lockName = `lock:${request.key}`;
    const token = randomUUID();
    const lockMs = this.options.queryTimeoutMs + 1000;
    const deadline = Date.now() + this.options.queryTimeoutMs + 500;
    let delay = 5;
    let waited = false;
    for (;;) {
      const locked = await this.guard.run(() => this.store.lock(lockName, token, lockMs));
      if (!locked.ok) return this.computeWithoutCache(request, compute);
      if (locked.value) return this.computeAndStore(request, compute, { name: lockName, token });

      // Another process is computing this key: wait for its value.
      if (!waited) this.count('singleflight_wait');
      waited = true;
      await sleep(delay);
      delay = Math.min(delay * 1.5, 50);
      const value = await this.guard.run(() => this.store.get(request.key));
      if (!value.ok) return this.computeWithoutCache(request, compute);
      if (value.value !== null) {
        this.touch(request);
        return { body: value.value, status: 'MISS' };
      }
      if (Date.now() > deadline) return this.computeAndStore(request, compute, undefined);
    }
  }

  private async computeAndStore(
    request: CacheRequest,
    compute: () => Promise<string>,
    lock: { name: string; token: string } | undefined,
  ): Promise<CacheOutcome> {
    let body: string;
    try {
      body = await compute();
    } catch (err) {
      if (lock) void this.guard.run(() => this.store.unlock(lock.name, lock.token));
      throw err;
    }
    const live = this.registration(request);
    if (live) this.touched.set(request.key, true);
    await this.guard.run(() => this.store.put(request.key, body, request.ttlSeconds, { live, unlock: lock }), extraPutMs(body));
    return { body, status: 'MISS' };
  }

  /**
   * perf: the store failed or was slow. A body this process saw for the key within the last minute
   * (a hit) or computed within the last seconds (FALLBACK_MS) answers instead, never past the
   * key's lifetime, so that while the store stays unhealthy a hot key costs no query and any key
   * is computed once per process and period instead of once per request. Measured
   * (BENCHMARKS.md, "cache fallback"): on a saturated 2-core machine a few Redis replies over the
   * 50 ms budget opened the breaker, every request then re-ran the 7-day usage query (seconds),
   * and cache-hit throughput fell from ~4,000 to 9–36 req/s.
   */
  private async computeWithoutCache(request: CacheRequest, compute: () => Promise<string>): Promise<CacheOutcome> {
    this.count('error');
    const kept = this.fallback.get(request.key, LRU_READ);
    if (kept !== undefined) return { body: kept, status: 'MISS' };
    const body = await compute();
    this.keep(request, body, FALLBACK_MS);
    return { body, status: 'MISS' };
  }

  /** Remembers a body for computeWithoutCache: the last hit of a key (a hot key survives a slow store without a query), or a direct computation. */
  private keep(request: CacheRequest, body: string, ms: number): void {
    // Too large a body keeps whatever the key had (lru-cache's own size limit would drop that too).
    if (body.length > FALLBACK_MAX_BODY) return;
    KEEP.ttl = Math.min(ms, request.ttlSeconds * 1000);
    this.fallback.set(request.key, body, KEEP);
  }

  /** Records a request of a warmed key: at most once a second per key, not awaited. */
  private touch(request: CacheRequest): void {
    if (!request.warmPeriodSeconds || this.touched.has(request.key, LRU_READ)) return;
    const now = this.now();
    this.touched.set(request.key, true);
    const live = this.registration(request, now)!;
    void this.guard.run(() => this.store.touch(request.key, live));
  }

  private registration(request: CacheRequest, now = this.now()): LiveRegistration | undefined {
    if (!request.warmPeriodSeconds || request.warmPeriodSeconds <= 0) return undefined;
    const entry = { spec: request.spec, ttlSeconds: request.ttlSeconds, warmPeriodSeconds: request.warmPeriodSeconds };
    return { entry, due: now + this.warmer.periodMs(entry), seenAt: now };
  }

  private count(event: CacheEvent): void {
    this.metrics.cacheEvents.inc(EVENT_LABELS[event]);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
