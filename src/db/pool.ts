import pg from 'pg';
import knexFactory, { type Knex } from 'knex';
import type { Logger } from '../logger.js';

export interface Database {
  /** Raw pool for log queries and ingest (prepared statements, COPY-like bulk writes). */
  readonly pool: pg.Pool;
  /** Query builder for the service's own tables. */
  readonly knex: Knex;
  readonly url: string;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  connectTimeoutMs: number;
  logger: Logger;
}

/**
 * Client-side limits on waiting for an answer (pg `query_timeout`). Postgres' own
 * statement_timeout cannot help when the connection stops passing data (network partition,
 * frozen host): without these a request waited until TCP gave up, many minutes. Endpoint
 * queries use their own, shorter limit (query/execute.ts); ingest writes and DDL get a generous
 * one; the admin (knex) queries are small lookups (test/hardening/faults.test.ts, "stalls").
 */
export const POOL_READ_TIMEOUT_MS = 60_000;
export const ADMIN_READ_TIMEOUT_MS = 10_000;

export function openDatabase({ url, poolSize, connectTimeoutMs, logger }: DatabaseOptions): Database {
  const pool = createPgPool({ url, poolSize, connectTimeoutMs, logger }, 'logquery');

  const knex = knexFactory({
    client: 'pg',
    connection: { connectionString: url, application_name: 'logquery-admin', query_timeout: ADMIN_READ_TIMEOUT_MS },
    pool: { min: 0, max: Math.max(2, Math.ceil(poolSize / 4)) },
    acquireConnectionTimeout: connectTimeoutMs,
  });

  return {
    pool,
    knex,
    url,
    async close() {
      await Promise.allSettled([pool.end(), knex.destroy()]);
    },
  };
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
  const pool = new pg.Pool({
    connectionString: url,
    ...(options ? { options } : {}),
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
