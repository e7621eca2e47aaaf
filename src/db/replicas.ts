/**
 * Read replicas (DATABASE_READ_URLS): where endpoint queries run. Ingest, management and the
 * catalog (sources, endpoints, keys) stay on the primary; only the translated read-only query of
 * an endpoint goes to a replica.
 *
 * A replica is used while its last check found it up and no more than MAX_REPLICA_LAG_MS behind
 * the primary; otherwise it is skipped until a later check finds it healthy again. With none
 * healthy, queries run on the primary. The checks run every REPLICA_CHECK_INTERVAL_MS.
 *
 * Lag: the primary's WAL position is sampled on each check (pg_current_wal_lsn) with the time it
 * was taken; a replica that has replayed up to a sample is at most `now - sample time` behind.
 * Unlike `now() - pg_last_xact_replay_timestamp()` this reads 0 on an idle primary and keeps
 * growing when the replica stops receiving WAL (its receive and replay positions then agree,
 * which the usual `receive = replay ⇒ 0` shortcut would take for "caught up").
 *
 * A query that fails on a replica because of the replica (connection refused or lost, the server
 * shutting down, a recovery conflict cancelling it, or a table the replica has not replayed yet)
 * marks it unhealthy and runs again on the next healthy replica or the primary: the query is
 * read-only, so running it twice changes nothing, and stopping a replica fails no request.
 *
 * Replicas are logged into as the reader role (src/db/readerPool.ts) with the password derived
 * from DATABASE_URL: the role and its password are set on the primary and replicated, so a
 * replica needs no credentials of its own, and the sandbox's third wall holds there as well.
 * Each DATABASE_READ_URLS entry gives the replica's host, port and options; its database is the
 * primary's unless the entry names one.
 */
import type pg from 'pg';
import { Counter, Gauge, type Registry } from 'prom-client';
import { readOnlySessionOptions, registerReadOnlySession } from './readOnlySession.js';
import { isDatabaseUnavailable } from './connectionErrors.js';
import { createPgPool, type DatabaseOptions } from './pool.js';
import { readerUrl } from './readerPool.js';
import type { Logger } from '../logger.js';

/** Where one query runs: a pool and whether the transaction must switch to the reader role itself. */
export interface QueryTarget {
  /** `primary`, or the replica's host:port (metric label; never the credentials). */
  readonly name: string;
  readonly pool: pg.Pool;
  readonly useReaderRole: boolean;
}

export interface ReplicaOptions {
  urls: readonly string[];
  /** DATABASE_URL: the reader's password is derived from it, the database name defaults to its. */
  primaryUrl: string;
  primaryPool: pg.Pool;
  maxLagMs: number;
  checkIntervalMs: number;
  pool: Omit<DatabaseOptions, 'url'>;
  statementTimeoutMs: number;
  registry: Registry;
  logger: Logger;
}

interface Replica extends QueryTarget {
  healthy: boolean;
  /** Milliseconds (at least) behind the primary at the last check; Infinity when down. */
  lagMs: number;
  /** Why it was last skipped (logged once per change). */
  reason: string | undefined;
}

/**
 * SQLSTATEs that mean "this replica cannot answer this now", not "the query is wrong": a recovery
 * conflict (40001 serialization_failure is what a standby sends when WAL replay cancels a query,
 * 40P01 for a deadlock with the startup process) and 42P01, a table (a partition or a source just
 * created on the primary) the replica has not replayed yet.
 */
const REPLICA_STATES = new Set(['40001', '40P01', '42P01']);

export class ReplicaRouter {
  private readonly replicas: Replica[];
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  /** Primary WAL positions with the time each was read, oldest first. */
  private readonly samples: Array<{ atMs: number; lsn: string }> = [];
  private readonly lagGauge: Gauge;
  private readonly healthyGauge: Gauge;
  private readonly routed: Counter;
  private readonly retried: Counter;

  constructor(
    private readonly primary: QueryTarget,
    private readonly options: ReplicaOptions,
  ) {
    const { password } = readerUrl(options.primaryUrl);
    const database = new URL(options.primaryUrl).pathname;
    this.replicas = options.urls.map((raw) => {
      const url = new URL(raw);
      url.username = primary.useReaderRole ? url.username : 'logquery_reader';
      url.password = primary.useReaderRole ? url.password : (password ?? '');
      if (url.pathname === '' || url.pathname === '/') url.pathname = database;
      const name = `${url.hostname}:${url.port || '5432'}`;
      const pool = createPgPool(
        { ...options.pool, url: url.toString() },
        'logquery-reader',
        primary.useReaderRole ? undefined : readOnlySessionOptions(options.statementTimeoutMs),
      );
      if (!primary.useReaderRole) registerReadOnlySession(pool, options.statementTimeoutMs);
      return { name, pool, useReaderRole: primary.useReaderRole, healthy: false, lagMs: Infinity, reason: undefined };
    });
    this.lagGauge = new Gauge({
      name: 'logquery_replica_lag_seconds',
      help: 'How far each read replica was behind the primary at its last check (+Inf when down or unknown)',
      labelNames: ['replica'],
      registers: [options.registry],
    });
    this.healthyGauge = new Gauge({
      name: 'logquery_replica_healthy',
      help: 'Whether each read replica takes endpoint queries (1) or is skipped (0: down or lagging more than MAX_REPLICA_LAG_MS)',
      labelNames: ['replica'],
      registers: [options.registry],
    });
    this.routed = new Counter({
      name: 'logquery_query_routes_total',
      help: 'Endpoint queries by where they ran: target is a replica (host:port) or primary',
      labelNames: ['target'],
      registers: [options.registry],
    });
    this.retried = new Counter({
      name: 'logquery_replica_retries_total',
      help: 'Endpoint queries run again elsewhere because a replica failed them (down, recovery conflict, table not replayed yet)',
      labelNames: ['replica'],
      registers: [options.registry],
    });
    for (const r of this.replicas) this.publish(r);
  }

  /** First check (so a healthy replica serves from the first request), then one per interval. */
  async start(): Promise<void> {
    await this.check();
    this.timer = setInterval(() => void this.check(), this.options.checkIntervalMs);
    this.timer.unref();
  }

  /** Replicas as the last check saw them (for /ready and tests). */
  status(): Array<{ name: string; healthy: boolean; lagMs: number | null }> {
    return this.replicas.map((r) => ({ name: r.name, healthy: r.healthy, lagMs: Number.isFinite(r.lagMs) ? r.lagMs : null }));
  }

  /**
   * Runs `query` on a healthy replica (round robin), or on the primary when none is. A failure
   * that is the replica's (see REPLICA_STATES, connection errors) takes it out and tries the next.
   */
  async run<T>(query: (target: QueryTarget) => Promise<T>): Promise<T> {
    const tried = new Set<Replica>();
    for (;;) {
      const replica = this.pick(tried);
      if (!replica) {
        this.routed.inc({ target: 'primary' });
        return query(this.primary);
      }
      tried.add(replica);
      this.routed.inc({ target: replica.name });
      try {
        return await query(replica);
      } catch (err) {
        if (!this.replicaFault(err)) throw err;
        this.retried.inc({ replica: replica.name });
        this.markDown(replica, `query failed: ${(err as Error).message}`);
      }
    }
  }

  /** Checks the replicas now (the primary moved: the promoted standby must stop taking reads). */
  recheck(): Promise<void> {
    return this.check();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.checking?.catch(() => undefined);
    await Promise.allSettled(this.replicas.map((r) => r.pool.end()));
  }

  private pick(tried: Set<Replica>): Replica | undefined {
    const n = this.replicas.length;
    for (let i = 0; i < n; i++) {
      const r = this.replicas[(this.next + i) % n];
      if (r.healthy && !tried.has(r)) {
        this.next = (this.next + i + 1) % n;
        return r;
      }
    }
    return undefined;
  }

  private replicaFault(err: unknown): boolean {
    return isDatabaseUnavailable(err) || REPLICA_STATES.has((err as { code?: string })?.code ?? '');
  }

  private check(): Promise<void> {
    // One check at a time: a replica that hangs must not pile checks up.
    this.checking ??= this.checkAll().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async checkAll(): Promise<void> {
    const now = Date.now();
    try {
      const { rows } = await this.options.primaryPool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      this.samples.push({ atMs: now, lsn: rows[0].lsn });
    } catch (err) {
      // The primary is down: the replicas keep the verdict of their last check.
      this.options.logger.debug({ err: (err as Error).message }, 'replica check: cannot read the primary WAL position');
      return;
    }
    // Samples older than the lag limit cannot make a replica healthy; one older is kept as a bound.
    while (this.samples.length > 2 && this.samples[1].atMs < now - this.options.maxLagMs * 2) this.samples.shift();
    await Promise.all(this.replicas.map((r) => this.checkOne(r)));
  }

  private async checkOne(replica: Replica): Promise<void> {
    const lsns = this.samples.map((s) => s.lsn);
    try {
      const { rows } = await withTimeout(
        replica.pool.query<{ recovery: boolean; reached: boolean[] }>(
          'SELECT pg_is_in_recovery() AS recovery, array(SELECT coalesce(pg_last_wal_replay_lsn() >= s, true) FROM unnest($1::pg_lsn[]) s) AS reached',
          [lsns],
        ),
        this.options.checkIntervalMs + this.options.maxLagMs,
      );
      // The oldest primary position the replica has not replayed yet: it misses a change made
      // before that sample was read, so it is at least that long behind (0 when it has them all).
      if (!rows[0].recovery) {
        // A promoted standby (or the primary itself) no longer follows the primary: never use it.
        replica.lagMs = Infinity;
        return this.markDown(replica, 'not a standby (pg_is_in_recovery() is false)');
      }
      const missing = rows[0].reached.indexOf(false);
      const lagMs = missing < 0 ? 0 : Date.now() - this.samples[missing].atMs;
      replica.lagMs = lagMs;
      if (lagMs > this.options.maxLagMs) this.markDown(replica, `lagging (${Number.isFinite(lagMs) ? `${lagMs} ms` : 'unknown'})`);
      else this.markUp(replica);
    } catch (err) {
      replica.lagMs = Infinity;
      this.markDown(replica, `unreachable: ${(err as Error).message}`);
    }
  }

  private markDown(replica: Replica, reason: string): void {
    if (replica.healthy || replica.reason === undefined)
      this.options.logger.warn(
        { replica: replica.name, reason },
        'read replica skipped: endpoint queries go to the other replicas or the primary',
      );
    replica.healthy = false;
    replica.reason = reason;
    this.publish(replica);
  }

  private markUp(replica: Replica): void {
    if (!replica.healthy) this.options.logger.info({ replica: replica.name, lagMs: replica.lagMs }, 'read replica takes endpoint queries');
    replica.healthy = true;
    replica.reason = undefined;
    this.publish(replica);
  }

  private publish(replica: Replica): void {
    this.lagGauge.set({ replica: replica.name }, replica.lagMs / 1000);
    this.healthyGauge.set({ replica: replica.name }, replica.healthy ? 1 : 0);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}
