/**
 * Redis keys of the hourly split (src/query/hourlySplit.ts, docs/ARCHITECTURE.md "Hourly partials"):
 *
 *   <ns>hv:<table>:<hour ms>                  the hour's write version: a random token, EX VERSION_TTL
 *   <ns>hp:<query hash>:<hour ms>:<version>    the partial rows of one query for one hour, until
 *                                             retention drops the hour (keepSeconds)
 *   <ns>hs:shapes, <ns>hs:shape:<query hash>  the shapes loads asked for lately, for the background
 *                                             (src/query/hourlyBackground.ts): a sorted set by last
 *                                             request, and each shape's description
 *   <ns>hs:lock                               which process computes the hours that just closed
 *
 * Exact invalidation: every write that adds or removes rows of a closed hour sets a new token for
 * it after its COMMIT (bumpHours): ingest (src/ingest/write.ts), retention's partition drops
 * (src/upkeep/sourceUpkeep.ts) and a source's deletion (src/sources/service.ts). A reader reads
 * the tokens before its snapshot, so a partial stored under a token was computed from a snapshot
 * holding every change committed before the token was set, and later changes change the token.
 * A token is never derived from a counter: a version key that expired or was evicted is recreated
 * with a fresh token (SET NX), so old partials are never read again. The version keys outlive the
 * partials (VERSION_TTL > KEEP_CAP).
 *
 * Every call is bounded (CALL_TIMEOUT_MS) and the client queues nothing while disconnected: with
 * Redis away, the reader runs the query whole, and ingest keeps the hours to bump and retries.
 */
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import type { Logger } from '../logger.js';

type Client = ReturnType<typeof createClient>;

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/**
 * The longest an hour's partial is kept, whatever the source's retention: a month's report. What
 * it costs, estimated for lq_bench_10m (1.4M edge events a day) and one project: the API report's
 * topRoutes has ~91k partial rows over 7 days (~540 an hour; 8 MB as JSON, ~90 bytes a row),
 * topSlowRoutes as many and a little wider, topErrorRoutes fewer, its 4 charts one row an hour:
 * ~120 KB an hour, ~2.9 MB a day of retention, ~20 MB for 7 days, ~90 MB at the default 30.
 */
export const KEEP_CAP_SECONDS = 31 * 86_400;
const VERSION_TTL_SECONDS = KEEP_CAP_SECONDS + 86_400;
/** A shape asked for within this long is kept in the registry and gets its new hours computed. */
export const SHAPE_RECENT_MS = 7 * DAY_MS;
/** The registry holds at most this many shapes (the most recently asked for). */
const SHAPE_REGISTRY_MAX = 1_000;
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

  /** Whether each partial is kept, without reading it. */
  async kept(keys: readonly string[]): Promise<boolean[]> {
    return Promise.all(keys.map(async (k) => (await this.call<number>(['EXISTS', this.ns + k])) === 1));
  }

  /** `seconds`: keepSeconds of the entry's hour. */
  async putPartials(entries: ReadonlyArray<[key: string, body: string, seconds: number]>): Promise<void> {
    await Promise.all(entries.map(([k, body, seconds]) => this.call(['SET', this.ns + k, body, 'EX', String(seconds)], READ_TIMEOUT_MS)));
  }

  /**
   * Notes that a load asked for a shape (`body`: its description) at `now`. `raiseOnly`: a shape
   * already ranked later keeps its rank (ZADD GT: a warm shape's registration, reportWarmup.ts,
   * never pushes back one a user asked for since).
   */
  async registerShape(hash: string, body: string, now: number, options: { raiseOnly?: boolean } = {}): Promise<void> {
    const ttl = String(Math.ceil(SHAPE_RECENT_MS / 1000) + 3600);
    await this.call(['SET', `${this.ns}hs:shape:${hash}`, body, 'EX', ttl]);
    await this.call(['ZADD', `${this.ns}hs:shapes`, ...(options.raiseOnly ? ['GT'] : []), String(now), hash]);
    await this.call(['ZREMRANGEBYRANK', `${this.ns}hs:shapes`, '0', String(-SHAPE_REGISTRY_MAX - 1)]);
  }

  /** The descriptions of the shapes asked for since `since`, most recent first (a shape whose description expired is left out). */
  async recentShapes(since: number): Promise<string[]> {
    const set = `${this.ns}hs:shapes`;
    await this.call(['ZREMRANGEBYSCORE', set, '-inf', `(${since}`]);
    const hashes = await this.call<string[]>(['ZRANGE', set, '+inf', String(since), 'BYSCORE', 'REV']);
    if (!hashes.length) return [];
    const bodies = await this.call<Array<string | null>>(['MGET', ...hashes.map((h) => `${this.ns}hs:shape:${h}`)], READ_TIMEOUT_MS);
    return bodies.filter((b): b is string => b !== null);
  }

  /** Takes the lock `name` for `ms` unless another holder has it: its token, or undefined. */
  async lock(name: string, ms: number): Promise<string | undefined> {
    const held = token();
    const ok = await this.call<string | null>(['SET', `${this.ns}hs:${name}`, held, 'NX', 'PX', String(ms)]);
    return ok === 'OK' ? held : undefined;
  }

  async unlock(name: string, held: string): Promise<void> {
    await this.call(['EVAL', UNLOCK, '1', `${this.ns}hs:${name}`, held]);
  }

  /**
   * After a COMMIT of rows into `hours` of `table`: a new version for each closed hour (ending at or
   * before now). Never fails: hours that could not be bumped are kept and bumped when Redis answers.
   */
  async bumpHours(table: string, hours: Iterable<number>, now = Date.now()): Promise<void> {
    for (const h of hours) if (h + HOUR_MS <= now) this.pending.add(this.versionKey(table, h));
    await this.flush();
  }

  /** After rows of whole days were removed (a partition or a table dropped): bumpHours of every hour of those days. */
  bumpDays(table: string, dayStarts: readonly number[], now = Date.now()): Promise<void> {
    return this.bumpHours(table, dayStarts.flatMap(hoursOfDay), now);
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

/** Deletes a lock only while it is still the caller's. */
const UNLOCK = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

/** The hours of a day (a day partition): what its drop removes rows from. */
function hoursOfDay(dayMs: number): number[] {
  return Array.from({ length: 24 }, (_, i) => dayMs + i * HOUR_MS);
}

/**
 * How long to keep the partial of the hour starting at `hourMs`: until retention drops its day
 * (the day's partition goes once the day is more than `retentionDays` whole days old, at the next
 * hourly upkeep: an hour of slack), at most KEEP_CAP_SECONDS; 0 when that has passed (not stored).
 * The drop bumps the hour's version anyway (exactness never rests on this): this only frees memory.
 */
export function keepSeconds(hourMs: number, retentionDays: number | undefined, now: number): number {
  const day = Math.floor(hourMs / DAY_MS) * DAY_MS;
  const until = retentionDays === undefined ? Infinity : (day + (retentionDays + 1) * DAY_MS + HOUR_MS - now) / 1000;
  return Math.max(0, Math.floor(Math.min(until, KEEP_CAP_SECONDS)));
}

function token(): string {
  return randomBytes(12).toString('base64url');
}
