/**
 * HA mode (DATABASE_URL lists several hosts, or asks `target_session_attrs=read-write`;
 * src/db/databaseUrl.ts): which host is the primary right now, and pools that follow it.
 * Promotion is the HA engine's job (pg_auto_failover, docs/OPERATIONS.md); the service only
 * finds the result, as libpq's `target_session_attrs=read-write` does: it tries the hosts in
 * turn, the last primary first, and takes the first that answers `pg_is_in_recovery() = false`
 * and `transaction_read_only = off`.
 *
 * The primary is looked for again when a query fails because the database went away (a
 * connection error, a server shutting down), when a write is refused as read-only (a demoted
 * node), and every PRIMARY_CHECK_INTERVAL_MS anyway (a primary that dies between two requests is
 * noticed within that time). While no host is the primary, the pools refuse at once with
 * NoPrimaryError (503 with Retry-After: the failover window) instead of waiting on a dead host,
 * and the search goes on every PRIMARY_RETRY_MS. When another host becomes the primary, every
 * FailoverPool opens a pool on it and ends (drains) the old one: its idle connections close now,
 * the ones in use when they are released.
 */
import pg from 'pg';
import { Counter, Gauge, type Registry } from 'prom-client';
import { isDatabaseUnavailable } from './connectionErrors.js';
import { hostOf } from './databaseUrl.js';
import type { Logger } from '../logger.js';

/** How often the primary is checked while all is well. */
export const PRIMARY_CHECK_INTERVAL_MS = 1000;
/** How often the hosts are tried again while none is the primary. */
export const PRIMARY_RETRY_MS = 250;

/** SQLSTATE 25006 read_only_sql_transaction: a write reached a server that no longer takes them. */
export const READ_ONLY_STATE = '25006';

/** No host accepts writes right now (the failover window). A 503 with Retry-After. */
export class NoPrimaryError extends Error {
  /** 57P03 cannot_connect_now: src/db/connectionErrors.ts counts it as "the database is not there". */
  readonly code = '57P03';
  constructor(detail: string) {
    super(`no database host accepts writes right now (${detail})`);
    this.name = 'NoPrimaryError';
  }
}

export interface PrimaryLocatorOptions {
  /** The single-host URLs of DATABASE_URL (splitDatabaseUrl). */
  urls: readonly string[];
  /** Limit of one check of one host (connect and answer). */
  checkTimeoutMs: number;
  registry: Registry;
  logger: Logger;
}

interface HostState {
  readOnly: boolean;
  /** The primary waits for a synchronous standby (synchronous_standby_names is set). */
  synchronous: boolean;
}

export class PrimaryLocator {
  /** The primary's URL; undefined while none is known (the failover window). */
  private current: string | undefined;
  /** The last primary found (kept through the window: a change is counted against it). */
  private last: string | undefined;
  private problem = 'not looked for yet';
  private downSinceMs: number | undefined;
  private searching: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly listeners = new Set<(url: string) => void>();
  private readonly changes: Counter;
  private readonly available: Gauge;
  private readonly synchronous: Gauge;
  private readonly unavailableTotal: Counter;
  private readonly lastUnavailable: Gauge;

  constructor(private readonly options: PrimaryLocatorOptions) {
    const registers = [options.registry];
    this.changes = new Counter({
      name: 'logquery_primary_changes_total',
      help: 'Times the service moved its writes to another database host (a failover or switchover)',
      registers,
    });
    this.available = new Gauge({
      name: 'logquery_primary_available',
      help: 'Whether a host of DATABASE_URL accepts writes (1) or none does (0: ingest and management answer 503)',
      registers,
    });
    this.synchronous = new Gauge({
      name: 'logquery_primary_synchronous',
      help: 'Whether the primary commits only once a synchronous standby has the WAL (1), or alone (0: degraded, standby lost)',
      registers,
    });
    this.unavailableTotal = new Counter({
      name: 'logquery_primary_unavailable_seconds_total',
      help: 'Seconds spent without a primary (failover windows), in all',
      registers,
    });
    this.lastUnavailable = new Gauge({
      name: 'logquery_primary_last_unavailable_seconds',
      help: 'Length of the last time without a primary (growing while it lasts)',
      registers,
      collect: () => {
        if (this.downSinceMs !== undefined) this.lastUnavailable.set((Date.now() - this.downSinceMs) / 1000);
      },
    });
  }

  /** Finds the primary (or throws NoPrimaryError) and starts checking it. */
  async start(): Promise<string> {
    await this.search();
    if (!this.current) throw new NoPrimaryError(this.problem);
    this.schedule(PRIMARY_CHECK_INTERVAL_MS);
    return this.current;
  }

  /** The primary's URL, or NoPrimaryError during the failover window. */
  get url(): string {
    if (!this.current) throw new NoPrimaryError(this.problem);
    return this.current;
  }

  /** What the last search found wrong, as an error (for calls made during the failover window). */
  unavailableError(): NoPrimaryError {
    return new NoPrimaryError(this.problem);
  }

  get hasPrimary(): boolean {
    return this.current !== undefined;
  }

  /** Calls `listener` with the new primary's URL whenever another host becomes the primary. */
  onChange(listener: (url: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * A query failed: if it failed because the database went away or refused a write as read-only,
   * look for the primary again now (not at the next check).
   */
  noteFailure(err: unknown): void {
    if (isDatabaseUnavailable(err) || (err as { code?: string })?.code === READ_ONLY_STATE) void this.search();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.searching;
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      void this.search().finally(() => this.schedule(this.current ? PRIMARY_CHECK_INTERVAL_MS : PRIMARY_RETRY_MS));
    }, delayMs);
    this.timer.unref();
  }

  /** One search at a time; callers during a search share it. */
  private search(): Promise<void> {
    this.searching ??= this.scan().finally(() => (this.searching = undefined));
    return this.searching;
  }

  private async scan(): Promise<void> {
    const first = this.current ?? this.last;
    const order = first ? [first, ...this.options.urls.filter((u) => u !== first)] : this.options.urls;
    const problems: string[] = [];
    for (const url of order) {
      const state = await this.check(url).catch((err: Error) => {
        problems.push(`${hostOf(url)}: ${err.message}`);
        return undefined;
      });
      if (!state) continue;
      if (state.readOnly) {
        problems.push(`${hostOf(url)}: read-only (standby)`);
        continue;
      }
      return this.found(url, state);
    }
    this.lost(problems.join('; '));
  }

  private async check(url: string): Promise<HostState> {
    const timeout = this.options.checkTimeoutMs;
    const client = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: timeout,
      query_timeout: timeout,
      application_name: 'logquery-primary-check',
    });
    client.on('error', () => undefined); // a host dying under the check: the query rejects anyway
    try {
      await client.connect();
      const { rows } = await client.query<{ recovery: boolean; read_only: string; sync: string }>(
        "SELECT pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS read_only, current_setting('synchronous_standby_names') AS sync",
      );
      return { readOnly: rows[0].recovery || rows[0].read_only === 'on', synchronous: rows[0].sync.trim() !== '' };
    } finally {
      void client.end().catch(() => undefined);
    }
  }

  private found(url: string, state: HostState): void {
    if (this.downSinceMs !== undefined) {
      const seconds = (Date.now() - this.downSinceMs) / 1000;
      this.downSinceMs = undefined;
      this.unavailableTotal.inc(seconds);
      this.lastUnavailable.set(seconds);
      this.options.logger.warn({ primary: hostOf(url), seconds }, 'a primary accepts writes again');
    }
    this.available.set(1);
    this.synchronous.set(state.synchronous ? 1 : 0);
    this.current = url;
    if (this.last !== undefined && this.last !== url) {
      this.changes.inc();
      this.options.logger.warn({ from: hostOf(this.last), to: hostOf(url) }, 'the primary moved: new connections go to the new one');
      this.last = url;
      for (const listener of this.listeners) listener(url);
    }
    this.last = url;
  }

  private lost(problem: string): void {
    this.problem = problem;
    if (this.downSinceMs === undefined && this.last !== undefined) {
      this.downSinceMs = Date.now();
      this.options.logger.warn({ problem }, 'no primary: writes answer 503 until one accepts writes again');
    }
    this.current = undefined;
    this.available.set(0);
    if (!this.closed && this.last !== undefined) this.schedule(PRIMARY_RETRY_MS);
  }
}

/**
 * A pg.Pool that follows the primary: every call goes to a pool on the current primary, made by
 * `open(url)`; when the primary moves, a new one is opened there and the old one is ended. During
 * the failover window its calls reject at once with NoPrimaryError. Failed queries and lost
 * connections make the locator look again (noteFailure).
 *
 * It is a pg.Pool so that everything written against one (the ingest writer, the sources, the
 * read-only executor) takes it unchanged; the base class's own pool is never used.
 */
export class FailoverPool extends pg.Pool {
  private inner: pg.Pool;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly locator: PrimaryLocator,
    private readonly open: (primaryUrl: string) => pg.Pool,
  ) {
    super({ max: 1 });
    this.inner = this.watch(open(locator.url));
    this.unsubscribe = locator.onChange((url) => {
      const old = this.inner;
      this.inner = this.watch(this.open(url));
      void old.end().catch(() => undefined);
    });
  }

  // pg.Pool#query has many overloads (text, config, submittable, callback); they pass through.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: unknown[]): any {
    const callback = typeof args[args.length - 1] === 'function' ? (args[args.length - 1] as (err: Error) => void) : undefined;
    if (!this.locator.hasPrimary) {
      const err = this.locator.unavailableError();
      if (callback) return void callback(err);
      return Promise.reject(err);
    }
    const result = (this.inner.query as (...a: unknown[]) => unknown).apply(this.inner, args);
    if (result instanceof Promise)
      return result.catch((err: unknown) => {
        this.locator.noteFailure(err);
        throw err;
      });
    return result;
  }

  // Only the promise form (connect()) is used by the service.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override connect(): any {
    if (!this.locator.hasPrimary) return Promise.reject(this.locator.unavailableError());
    return this.inner.connect().catch((err: unknown) => {
      this.locator.noteFailure(err);
      throw err;
    });
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override end(): any {
    this.unsubscribe();
    return this.inner.end();
  }

  /** A connection lost mid-session (the host died) starts a search at once. */
  private watch(pool: pg.Pool): pg.Pool {
    pool.on('connect', (client) => client.on('error', (err) => this.locator.noteFailure(err)));
    return pool;
  }
}
