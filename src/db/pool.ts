import { probeCapabilities, type DatabaseCapabilities } from './capabilities.js';
import pg from 'pg';
import knexFactory, { type Knex } from 'knex';
import type { Logger } from '../logger.js';
import { FailoverPool, type PrimaryLocator } from './primary.js';
import { startupOptions } from './databaseUrl.js';

export interface Database {
  /** Raw pool for log queries and ingest (prepared statements, COPY-like bulk writes). */
  readonly pool: pg.Pool;
  /** Query builder for the service's own tables. */
  readonly knex: Knex;
  /** A single-host URL (in HA mode, the primary found at start): credentials and database of derived pools. */
  readonly url: string;
  /** HA mode (several hosts in DATABASE_URL, src/db/primary.ts): what finds the primary; undefined otherwise. */
  readonly primary: PrimaryLocator | undefined;
  /** What this database can do, asked once when it is opened (src/db/capabilities.ts). */
  readonly capabilities: DatabaseCapabilities;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  connectTimeoutMs: number;
  logger: Logger;
  /** HA mode: the pools follow this locator's primary (src/db/primary.ts). */
  primary?: PrimaryLocator;
}

/**
 * In HA mode, an ingest batch is acknowledged after its COMMIT, and the COMMIT returns once the
 * synchronous standby has flushed the WAL to disk (`synchronous_commit = on`, with the engine's
 * `synchronous_standby_names`): a 200 survives the loss of either node. Set on the service's
 * sessions so a server-wide `local` or `off` cannot weaken it (docs/OPERATIONS.md).
 */
export const HA_SESSION_OPTIONS = '-c synchronous_commit=on';

/**
 * Client-side limits on waiting for an answer (pg `query_timeout`). Postgres' own
 * statement_timeout cannot help when the connection stops passing data (network partition,
 * frozen host): without these a request waited until TCP gave up, many minutes. Endpoint
 * queries use their own, shorter limit (query/execute.ts); ingest writes and DDL get a generous
 * one; the admin (knex) queries are small lookups (test/hardening/faults.test.ts, "stalls").
 */
export const POOL_READ_TIMEOUT_MS = 60_000;
export const ADMIN_READ_TIMEOUT_MS = 10_000;

/** Opens the pools and asks the database what it can do (after migrations: the reader role is theirs). */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const { url, poolSize, connectTimeoutMs, primary } = options;
  const pool = onPrimary(options, (primaryUrl) =>
    createPgPool({ ...options, url: primaryUrl }, 'logquery', primary ? HA_SESSION_OPTIONS : undefined),
  );
  const admin = { application_name: 'logquery-admin', query_timeout: ADMIN_READ_TIMEOUT_MS };

  const knex = knexFactory({
    client: 'pg',
    // In HA mode new connections go to the current primary (NoPrimaryError during the failover
    // window). knex keeps these settings until expirationChecker says the primary moved; then it
    // asks again and discards the connections made with the old ones (drains its pool).
    connection: primary
      ? () => {
          const at = primary.url;
          return {
            connectionString: at,
            options: startupOptions(at, HA_SESSION_OPTIONS),
            ...admin,
            expirationChecker: () => primary.hasPrimary && primary.url !== at,
          };
        }
      : { connectionString: url, ...admin },
    pool: { min: 0, max: Math.max(2, Math.ceil(poolSize / 4)) },
    acquireConnectionTimeout: connectTimeoutMs,
  });

  const close = async () => {
    await Promise.allSettled([pool.end(), knex.destroy()]);
  };
  const capabilities = await probeCapabilities(pool).catch(async (err: unknown) => {
    await close();
    throw err;
  });
  return { pool, knex, url, primary, capabilities, close };
}

/**
 * The pool `make` opens on the database: on DATABASE_URL's one host, or in HA mode a FailoverPool
 * that opens it on whichever host is the primary (src/db/primary.ts).
 */
export function onPrimary(db: Pick<DatabaseOptions, 'url' | 'primary'>, make: (url: string) => pg.Pool): pg.Pool {
  return db.primary ? new FailoverPool(db.primary, make) : make(db.url);
}

/**
 * A pg pool that survives lost connections (idle or checked out) without crashing the process.
 * `options`: startup options of every connection (`-c name=value …`).
 */
export function createPgPool(
  { url, poolSize, connectTimeoutMs, logger }: DatabaseOptions,
  applicationName: string,
  options?: string,
): pg.Pool {
  const all = options ? startupOptions(url, options) : undefined;
  const pool = new pg.Pool({
    connectionString: url,
    ...(all ? { options: all } : {}),
    max: poolSize,
    connectionTimeoutMillis: connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    application_name: applicationName,
    query_timeout: POOL_READ_TIMEOUT_MS,
  });
  // An idle client losing its connection (database restart) must not crash the process:
  // the pool drops it and the next request gets a fresh connection.
  pool.on('error', (err) => logger.warn({ err: err.message }, 'idle database connection lost'));
  // A *checked-out* client losing its connection (database stopped mid-query) emits 'error' too,
  // and pg-pool removes its own listener while a client is checked out: with no listener the
  // EventEmitter throws and the process crashes. The query in flight is rejected anyway (the
  // request answers 503) and the pool drops the client on release (it is no longer queryable),
  // so this listener only has to exist (test/hardening/faults.test.ts, "Postgres gone").
  pool.on('connect', (client) => {
    client.on('error', (err) => logger.warn({ err: err.message }, 'database connection lost during a query'));
  });
  return pool;
}
