/**
 * The in-process store of the request rate (requestRate.ts): fixed windows per key, counted as
 * rate-limiter-flexible counts them in Redis (a window starts at a key's first request and lasts
 * `windowMs`; every request counts, refused ones too), so a process deciding alone allows what the
 * shared budget would. Its own rather than rate-limiter-flexible's RateLimiterMemory, which reads
 * Date.now and expires windows with timers: this one reads an injected clock, so tests move time
 * instead of sleeping through it.
 */
import { LRUCache } from 'lru-cache';

export interface WindowDecision {
  allowed: boolean;
  /** Until the key's window ends (and its count starts again). */
  msBeforeNext: number;
}

interface Window {
  count: number;
  readonly endsAt: number;
}

export class FixedWindows {
  /** Per key; the least recently used go past `maxKeys`, so a flood of keys cannot grow it forever. */
  private readonly windows: LRUCache<string, Window>;

  constructor(
    private readonly points: number,
    private readonly windowMs: number,
    private readonly now: () => number,
    maxKeys = 100_000,
  ) {
    this.windows = new LRUCache({ max: maxKeys });
  }

  /** Counts one request of `key`: allowed while its window has had at most `points`. */
  take(key: string): WindowDecision {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { count: 0, endsAt: now + this.windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { allowed: window.count <= this.points, msBeforeNext: window.endsAt - now };
  }
}

/**
 * rate-limiter-flexible's BurstyRateLimiter over two FixedWindows: the rate's window first; when it
 * is spent, the burst allowance's. Refused: until the sooner of the two windows ends.
 */
export class BurstyWindows {
  constructor(
    private readonly rate: FixedWindows,
    private readonly burst: FixedWindows | undefined,
  ) {}

  take(key: string): WindowDecision {
    const rate = this.rate.take(key);
    if (rate.allowed || !this.burst) return rate;
    const burst = this.burst.take(key);
    return { allowed: burst.allowed, msBeforeNext: Math.min(rate.msBeforeNext, burst.msBeforeNext) };
  }
}
