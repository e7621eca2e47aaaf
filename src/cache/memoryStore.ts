/**
 * The in-process cache used without REDIS_URL: an LRU bounded by entries and by size, with the
 * same lock and live-key calls as Redis so that single flight and warming behave the same
 * (within one process; replicas do not share it).
 */
import type { CacheStore, DueKey, LiveEntry, LiveRegistration } from './store.js';

export interface MemoryStoreOptions {
  maxEntries?: number;
  /** Upper bound of the summed body lengths (UTF-16 code units, about bytes for JSON). */
  maxBytes?: number;
  now?: () => number;
}

interface Body {
  body: string;
  expiresAt: number;
}

export class MemoryStore implements CacheStore {
  readonly remote = false;
  private readonly bodies = new Map<string, Body>(); // insertion order = LRU order, oldest first
  private bytes = 0;
  private readonly locks = new Map<string, { token: string; expiresAt: number }>();
  private readonly live = new Map<string, LiveRegistration>();
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly now: () => number;

  constructor(options: MemoryStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.maxBytes = options.maxBytes ?? 128 * 1024 * 1024;
    this.now = options.now ?? Date.now;
  }

  /** Entries and summed size currently held (for tests and diagnostics). */
  get size(): { entries: number; bytes: number } {
    return { entries: this.bodies.size, bytes: this.bytes };
  }

  async get(key: string): Promise<string | null> {
    const hit = this.bodies.get(key);
    if (!hit) return null;
    this.bodies.delete(key);
    if (hit.expiresAt <= this.now()) {
      this.bytes -= hit.body.length;
      return null;
    }
    this.bodies.set(key, hit); // most recently used
    return hit.body;
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

  async put(key: string, body: string, ttlSeconds: number, extra: { live?: LiveRegistration; unlock?: { name: string; token: string } } = {}): Promise<void> {
    this.remove(key);
    if (body.length <= this.maxBytes) {
      this.bodies.set(key, { body, expiresAt: this.now() + ttlSeconds * 1000 });
      this.bytes += body.length;
      this.evict();
    }
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
    for (const [key, reg] of this.live) if (reg.due <= now) due.push({ key, due: reg.due });
    return due.sort((a, b) => a.due - b.due).slice(0, limit);
  }

  async liveEntries(keys: string[]): Promise<Array<{ entry: LiveEntry; seenAt: number } | null>> {
    return keys.map((key) => {
      const reg = this.live.get(key);
      return reg ? { entry: reg.entry, seenAt: reg.seenAt } : null;
    });
  }

  async reschedule(key: string, due: number): Promise<void> {
    const reg = this.live.get(key);
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
    this.bytes = 0;
    this.locks.clear();
    this.live.clear();
  }

  private register(key: string, live: LiveRegistration): void {
    this.live.set(key, { entry: live.entry, due: live.due, seenAt: live.seenAt });
    if (this.live.size > this.maxEntries) this.live.delete(this.live.keys().next().value!);
  }

  private remove(key: string): void {
    const old = this.bodies.get(key);
    if (!old) return;
    this.bodies.delete(key);
    this.bytes -= old.body.length;
  }

  private evict(): void {
    while (this.bodies.size > this.maxEntries || this.bytes > this.maxBytes) {
      const oldest = this.bodies.keys().next().value!;
      this.remove(oldest);
    }
  }
}
