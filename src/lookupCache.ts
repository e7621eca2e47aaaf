/**
 * Records looked up by key in the service's own tables (API keys, endpoints), kept in memory
 * for `ttlMs` after their lookup started, so a cached value is never older than that (other
 * replicas' changes show within it).
 *
 * perf: concurrent lookups of one key share one query, and a key in use is looked up again in
 * the background `refreshAheadMs` before its entry expires, so requests do not wait for the
 * database every few seconds. `clear()` (after a change on this replica) drops the entries and
 * keeps a lookup already in flight from being stored, so the change shows at once here.
 */
export interface LookupCacheOptions<V> {
  ttlMs: number;
  refreshAheadMs: number;
  /** Past this many entries a new key empties the cache: random unknown keys cannot grow it forever. */
  maxEntries: number;
  load: (key: string) => Promise<V>;
  /** Whether a loaded value is cached (default: every value); one that is not also drops the key's entry. */
  keep?: (value: V) => boolean;
}

export class LookupCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  private readonly pending = new Map<string, Promise<V>>();
  /** Bumped by `clear`: a lookup that started before is not stored. */
  private generation = 0;

  constructor(private readonly options: LookupCacheOptions<V>) {}

  /** The cached value while it is fresh, without a promise (`{ value }`, which may hold undefined); undefined when there is none. */
  peek(key: string): { value: V } | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    const left = hit.until - Date.now();
    if (left <= 0) return undefined;
    if (left < this.options.refreshAheadMs && !this.pending.has(key)) this.lookup(key).catch(() => undefined);
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
    const started = Date.now();
    const generation = this.generation;
    const settle = (): boolean => {
      if (this.pending.get(key) === lookup) this.pending.delete(key);
      return generation === this.generation;
    };
    const lookup = this.options.load(key).then(
      (value) => {
        if (!settle()) return value;
        if (this.options.keep && !this.options.keep(value)) {
          this.entries.delete(key);
          return value;
        }
        if (this.entries.size >= this.options.maxEntries && !this.entries.has(key)) this.entries.clear();
        this.entries.set(key, { value, until: started + this.options.ttlMs });
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
