/**
 * Records looked up by key in the service's own tables (API keys, endpoints), kept in memory
 * for `ttlMs` after their lookup started, so a cached value is never older than that (other
 * replicas' changes show within it).
 *
 * perf: concurrent lookups of one key share one query, and a key in use is looked up again in
 * the background `refreshAheadMs` before its entry expires, so requests do not wait for the
 * database every few seconds. `clear()` (after a change on this replica) drops the entries and
 * keeps a lookup already in flight from being stored, so the change shows at once here; whoever
 * already waits for that lookup still gets its value.
 *
 * The entries live in an LRUCache (ttl from the lookup's start, `max`); the lookups in flight are
 * tracked here rather than by its `fetchMethod`, whose `clear()` aborts them: their waiters would
 * then reject (or, with `ignoreFetchAbort`, still reject when the value is not to be kept), and
 * refreshing ahead from `peek` would have no allocation-free way to tell a refresh is under way.
 */
import { LRUCache } from 'lru-cache';
import { LRU_READ } from './lruRead.js';

export interface LookupCacheOptions<V> {
  ttlMs: number;
  refreshAheadMs: number;
  /** Past this many entries the least recently used goes: random unknown keys cannot grow it forever. */
  maxEntries: number;
  load: (key: string) => Promise<V>;
  /** Whether a loaded value is cached (default: every value); one that is not also drops the key's entry. */
  keep?: (value: V) => boolean;
  /** The clock of lifetimes (default performance.now via lru-cache): tests move theirs by hand. */
  now?: () => number;
}

/** A cached value, boxed so that undefined can be cached and `peek` hands out the box itself. */
interface Hit<V> {
  readonly value: V;
  /** When a read starts the next lookup in the background (lru-cache's clock). */
  readonly refreshAt: number;
}

export class LookupCache<V> {
  private readonly entries: LRUCache<string, Hit<V>>;
  private readonly pending = new Map<string, Promise<V>>();
  /** Bumped by `clear`: a lookup that started before is not stored. */
  private generation = 0;

  constructor(private readonly options: LookupCacheOptions<V>) {
    // ttlResolution 0: every read compares with the clock itself; a cached "now" can lag behind
    // when a busy event loop delays the timer that resets it.
    this.entries = new LRUCache({
      max: options.maxEntries,
      ttl: options.ttlMs,
      ttlResolution: 0,
      ...(options.now ? { perf: { now: options.now } } : {}),
    });
  }

  /** The cached value while it is fresh, without a promise (`{ value }`, which may hold undefined); undefined when there is none. */
  peek(key: string): { value: V } | undefined {
    const hit = this.entries.get(key, LRU_READ);
    if (hit && hit.refreshAt < this.entries.perf.now() && !this.pending.has(key)) this.lookup(key).catch(() => undefined);
    return hit;
  }

  /** The cached value, or the (shared) lookup. */
  get(key: string): V | Promise<V> {
    const hit = this.peek(key);
    return hit ? hit.value : this.lookup(key);
  }

  clear(): void {
    this.entries.clear();
    this.pending.clear();
    this.generation++;
  }

  private lookup(key: string): Promise<V> {
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const start = this.entries.perf.now();
    const generation = this.generation;
    const settle = (): boolean => {
      if (this.pending.get(key) === lookup) this.pending.delete(key);
      return generation === this.generation;
    };
    const lookup = this.options.load(key).then(
      (value) => {
        if (!settle()) return value;
        if (this.options.keep && !this.options.keep(value)) this.entries.delete(key);
        else this.entries.set(key, { value, refreshAt: start + this.options.ttlMs - this.options.refreshAheadMs }, { start });
        return value;
      },
      (err) => {
        settle();
        throw err;
      },
    );
    this.pending.set(key, lookup);
    return lookup;
  }
}
