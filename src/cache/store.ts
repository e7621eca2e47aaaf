/**
 * The storage behind the result cache: Redis when configured (shared by replicas), else an
 * in-process LRU. Both answer the same calls, so `ResultCache` and the warmer have one code path.
 *
 * Names passed in (`ep:…` keys, `lock:<key>`, `warm:<key>:<period>`) are namespaced by the store.
 */
import type { WarmSpec } from './types.js';

/** What the warmer needs to re-run a live key. Stored as JSON beside the key. */
/** What a put may also do: register the key as live, and give back the single-flight lock it held. */
export interface PutExtra {
  live?: LiveRegistration;
  unlock?: { name: string; token: string };
}

export interface LiveEntry {
  spec: WarmSpec;
  ttlSeconds: number;
  /** Unscaled; the warmer multiplies it by `warmingScale`. */
  warmPeriodSeconds: number;
}

/** A live key registration: the entry, when it is next due (ms), and when it was last requested (ms). */
export interface LiveRegistration {
  entry: LiveEntry;
  due: number;
  seenAt: number;
}

export interface DueKey {
  key: string;
  due: number;
}

export interface CacheStore {
  /** True for Redis: calls may fail or stall, so the cache guards them with a time budget. */
  readonly remote: boolean;
  get(key: string): Promise<string | null>;
  /** `SET <name> <token> NX PX <ttlMs>`: true when the caller now holds the lock. */
  lock(name: string, token: string, ttlMs: number): Promise<boolean>;
  /** Deletes the lock only when `token` still holds it. */
  unlock(name: string, token: string): Promise<void>;
  /**
   * `SET key body EX ttl`, and in the same round trip: register the key as live (when `live`),
   * release a lock (when `unlock`).
   */
  put(key: string, body: string, ttlSeconds: number, extra?: PutExtra): Promise<void>;
  /** A request for a live key: records `seenAt`, and registers the key again if it was dropped. */
  touch(key: string, live: LiveRegistration): Promise<void>;
  /** Live keys due at `now`, oldest first. */
  dueKeys(now: number, limit: number): Promise<DueKey[]>;
  /** Entry and last-request time of each key; null where the key is no longer live. */
  liveEntries(keys: string[]): Promise<Array<{ entry: LiveEntry; seenAt: number } | null>>;
  /** Sets the next due time of a key that is still live. */
  reschedule(key: string, due: number): Promise<void>;
  /** Stops warming the keys (their cached bodies stay until they expire). */
  drop(keys: string[]): Promise<void>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
