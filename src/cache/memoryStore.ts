/**
 * The in-process cache used without REDIS_URL: an LRU bounded by entries and by size, with the
 * same lock and live-key calls as Redis so that single flight and warming behave the same
 * (within one process; replicas do not share it).
 */
import { LRUCache } from 'lru-cache';
import type { CacheStore, DueKey, LiveEntry, LiveRegistration, PutExtra } from './store.js';

export interface MemoryStoreOptions {
  maxEntries?: number;
  /** Upper bound of the summed body lengths (UTF-16 code units, about bytes for JSON). */
  maxBytes?: number;
  now?: () => number;
}

export class MemoryStore implements CacheStore {
  readonly remote = false;
  /** A body larger than the whole budget is not stored (lru-cache's maxEntrySize defaults to maxSize). */
  private readonly bodies: LRUCache<string, string>;
  /** Not a cache: a held lock must never be evicted, so expired ones are swept instead. */
  private readonly locks = new Map<string, { token: string; expiresAt: number }>();
  /** Live keys for the warmer; past `maxEntries` the least recently registered or touched goes. */
  private readonly live: LRUCache<string, LiveRegistration>;
  private readonly now: () => number;

  constructor(options: MemoryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    const max = options.maxEntries ?? 10_000;
    // ttlResolution 0: expiry compares with the clock itself, never with a "now" cached by a timer.
    this.bodies = new LRUCache({
      max,
      maxSize: options.maxBytes ?? 128 * 1024 * 1024,
      sizeCalculation: (body) => body.length || 1,
      ttlResolution: 0,
      perf: { now: this.now },
    });
    this.live = new LRUCache({ max });
  }

  /** Entries and summed size currently held (for tests and diagnostics). */
  get size(): { entries: number; bytes: number } {
    return { entries: this.bodies.size, bytes: this.bodies.calculatedSize };
  }

  async get(key: string): Promise<string | null> {
    return this.bodies.get(key) ?? null;
  }

  async lock(name: string, token: string, ttlMs: number): Promise<boolean> {
    const now = this.now();
    const held = this.locks.get(name);
    if (held && held.expiresAt > now) return false;
    if (this.locks.size >= 1000) for (const [n, l] of this.locks) if (l.expiresAt <= now) this.locks.delete(n);
    this.locks.set(name, { token, expiresAt: now + ttlMs });
    return true;
  }

  async unlock(name: string, token: string): Promise<void> {
    if (this.locks.get(name)?.token === token) this.locks.delete(name);
  }

  async put(key: string, body: string, ttlSeconds: number, extra: PutExtra = {}): Promise<void> {
    if (ttlSeconds > 0) this.bodies.set(key, body, { ttl: ttlSeconds * 1000 });
    else this.bodies.delete(key);
    if (extra.live) this.register(key, extra.live);
    if (extra.unlock) await this.unlock(extra.unlock.name, extra.unlock.token);
  }

  async touch(key: string, live: LiveRegistration): Promise<void> {
    const current = this.live.get(key);
    if (current) current.seenAt = live.seenAt;
    else this.register(key, live);
  }

  async dueKeys(now: number, limit: number): Promise<DueKey[]> {
    const due: DueKey[] = [];
    for (const [key, reg] of this.live.entries()) if (reg.due <= now) due.push({ key, due: reg.due });
    return due.sort((a, b) => a.due - b.due).slice(0, limit);
  }

  async liveEntries(keys: string[]): Promise<Array<{ entry: LiveEntry; seenAt: number } | null>> {
    return keys.map((key) => {
      const reg = this.live.peek(key);
      return reg ? { entry: reg.entry, seenAt: reg.seenAt } : null;
    });
  }

  async reschedule(key: string, due: number): Promise<void> {
    const reg = this.live.peek(key);
    if (reg) reg.due = due;
  }

  async drop(keys: string[]): Promise<void> {
    for (const key of keys) this.live.delete(key);
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.bodies.clear();
    this.locks.clear();
    this.live.clear();
  }

  private register(key: string, live: LiveRegistration): void {
    this.live.set(key, { entry: live.entry, due: live.due, seenAt: live.seenAt });
  }
}
