/**
 * security: lookups of API keys the service does not know, limited per client address (issue 25,
 * finding 10). Each unknown key cost a database lookup: 2,000 random keys made about 1,500
 * transactions, and their cached "unknown" answers pushed known keys out of the lookup cache.
 *
 * An address may start UNKNOWN_KEY_LOOKUPS_PER_MINUTE lookups that find nothing per minute (a
 * fixed window from its first); a lookup counts from its start, so a burst of concurrent guesses
 * is bounded too, and one that finds a key (or fails, the database unavailable) is given back. Past it, a request whose key is not
 * already known on this process is answered 429 with Retry-After, without a lookup. Keys already
 * looked up (cached, src/auth/authenticate.ts) pass whatever the address did, so a valid key, from
 * that address or any other, keeps working; a valid key first seen from an address over its
 * budget waits out the window with the guesser.
 *
 * The address is the socket's: behind a reverse proxy every client shares the proxy's, so set the
 * limit for the proxy's total (or 0: no limit) there. Counted per process, in memory: N processes
 * allow N times the budget, still a bound on the database's work per process.
 */
import type { IncomingMessage } from 'node:http';
import { LRUCache } from 'lru-cache';

const WINDOW_MS = 60_000;

interface Window {
  /** Lookups that found nothing or are still in flight. */
  count: number;
  readonly resetAt: number;
}

export class UnknownKeyLimiter {
  /** Per address; the least recently seen go past `maxAddresses`, so a flood of addresses cannot grow it forever. */
  private readonly windows: LRUCache<string, Window>;

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
    maxAddresses = 100_000,
  ) {
    this.windows = new LRUCache({ max: maxAddresses });
  }

  /**
   * Takes one lookup of `address`'s budget: undefined when it may look up, else the milliseconds
   * until it may again. A lookup that then finds a key, or fails, is given back with `giveBack`.
   */
  take(address: string): number | undefined {
    if (this.perMinute <= 0) return undefined;
    const now = this.now();
    let window = this.windows.get(address);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + WINDOW_MS };
      this.windows.set(address, window);
    }
    if (window.count >= this.perMinute) return window.resetAt - now;
    window.count++;
    return undefined;
  }

  /** The lookup `take` allowed found a key, or failed: it does not count. */
  giveBack(address: string): void {
    const window = this.windows.get(address);
    if (window && window.count > 0) window.count--;
  }
}

/** The client address of a request: its socket's peer. */
export function clientAddress(req: IncomingMessage): string {
  return req.socket?.remoteAddress ?? 'unknown';
}
