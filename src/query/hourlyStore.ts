/**
 * Redis keys of the hourly split (src/query/hourlySplit.ts, docs/ARCHITECTURE.md "Hourly partials"):
 *
 *   <ns>hv:<table>:<hour ms>                  the hour's write version: a random token, EX VERSION_TTL
 *   <ns>hp:<query hash>:<hour ms>:<version>    the partial rows of one query for one hour, EX PARTIAL_TTL
 *
 * Exact invalidation: ingest sets a new token for every closed hour a batch wrote into, after its
 * COMMIT (bumpHours); a reader reads the tokens before its snapshot, so a partial stored under a
 * token was computed from a snapshot holding every row written before the token was set, and rows
 * written later change the token. A token is never derived from a counter: a version key that
 * expired or was evicted is recreated with a fresh token (SET NX), so old partials are never read
 * again. The version keys outlive the partials (VERSION_TTL > PARTIAL_TTL).
 *
 * Every call is bounded (CALL_TIMEOUT_MS) and the client queues nothing while disconnected: with
 * Redis away, the reader runs the query whole, and ingest keeps the hours to bump and retries.
 */
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import type { Logger } from '../logger.js';

type Client = ReturnType<typeof createClient>;

export const PARTIAL_TTL_SECONDS = 24 * 3600;
const VERSION_TTL_SECONDS = 3 * 24 * 3600;
const CALL_TIMEOUT_MS = 1000;
/** Reads of partial rows carry megabytes for a 7-day window of a grouped query (8 MB for the API report's top routes on lq_bench_10m), and the fallback is running the query whole: a generous budget. */
const READ_TIMEOUT_MS = 5000;
const RETRY_MS = 1000;
/** Hours waiting for a bump while Redis is away: beyond this many, the oldest are forgotten (their partials expire by TTL). */
const MAX_PENDING = 100_000;

export class HourlyStore {
  private readonly pending = new Set<string>();
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly client: Client,
    private readonly ns: string,
    private readonly logger: Logger | undefined,
  ) {}

  static async open(url: string, options: { namespace?: string; logger?: Logger } = {}): Promise<HourlyStore> {
    const client = createClient({
      url,
      disableOfflineQueue: true,
      socket: { connectTimeout: 1000, keepAlive: true, noDelay: true, reconnectStrategy: (n: number) => Math.min(50 * 2 ** n, 2000) },
    });
    const store = new HourlyStore(client, options.namespace ?? 'lq:', options.logger);
    client.on('error', () => undefined); // failures surface as rejected calls; the reader runs whole
    await Promise.race([client.connect().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
    return store;
  }

  private call<T>(command: string[], timeoutMs = CALL_TIMEOUT_MS): Promise<T> {
    if (!this.client.isReady) return Promise.reject(new Error('redis not ready'));
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      this.client.sendCommand<T>(command),
      new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error('redis call timed out')), timeoutMs))),
    ]).finally(() => clearTimeout(timer));
  }

  /** Bumps of this process not yet written: until they are, its readers do not split (their partials may be stale). */
  hasPending(): boolean {
    return this.pending.size > 0;
  }

  private versionKey(table: string, hourMs: number): string {
    return `${this.ns}hv:${table}:${hourMs}`;
  }

  /** The write version of each hour, creating the missing ones. */
  async versions(table: string, hours: readonly number[]): Promise<string[]> {
    if (!hours.length) return [];
    const keys = hours.map((h) => this.versionKey(table, h));
    let tokens = await this.call<Array<string | null>>(['MGET', ...keys]);
    const missing = keys.filter((_, i) => tokens[i] === null);
    if (missing.length) {
      await Promise.all(missing.map((k) => this.call(['SET', k, token(), 'NX', 'EX', String(VERSION_TTL_SECONDS)])));
      tokens = await this.call<Array<string | null>>(['MGET', ...keys]);
    }
    if (tokens.some((t) => t === null)) throw new Error('version keys vanished');
    return tokens as string[];
  }

  async getPartials(keys: readonly string[]): Promise<Array<string | null>> {
    if (!keys.length) return [];
    return this.call<Array<string | null>>(['MGET', ...keys.map((k) => this.ns + k)], READ_TIMEOUT_MS);
  }

  async putPartials(entries: ReadonlyArray<[key: string, body: string]>): Promise<void> {
    await Promise.all(
      entries.map(([k, body]) => this.call(['SET', this.ns + k, body, 'EX', String(PARTIAL_TTL_SECONDS)], READ_TIMEOUT_MS)),
    );
  }

  /**
   * After a COMMIT of rows into `hours` of `table`: a new version for each closed hour (ending at or
   * before now). Never fails: hours that could not be bumped are kept and bumped when Redis answers.
   */
  async bumpHours(table: string, hours: Iterable<number>, now = Date.now()): Promise<void> {
    for (const h of hours) if (h + 3_600_000 <= now) this.pending.add(this.versionKey(table, h));
    await this.flush();
  }

  private async flush(): Promise<void> {
    if (!this.pending.size) return;
    const keys = [...this.pending];
    try {
      await Promise.all(keys.map((k) => this.call(['SET', k, token(), 'EX', String(VERSION_TTL_SECONDS)])));
      for (const k of keys) this.pending.delete(k);
    } catch (err) {
      while (this.pending.size > MAX_PENDING) this.pending.delete(this.pending.values().next().value as string);
      this.logger?.warn(
        { err: (err as Error).message, hours: this.pending.size },
        'hourly partials: could not bump write versions; retrying',
      );
      if (!this.retry && !this.closed) {
        this.retry = setTimeout(() => {
          this.retry = undefined;
          void this.flush();
        }, RETRY_MS);
        this.retry.unref();
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    // A client still trying to connect has nothing to QUIT: it is only stopped.
    if (this.client.isReady) await this.client.quit().catch(() => undefined);
    else if (this.client.isOpen) await this.client.disconnect().catch(() => undefined);
  }
}

function token(): string {
  return randomBytes(12).toString('base64url');
}
