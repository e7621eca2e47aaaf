import type pg from 'pg';
import type { Knex } from 'knex';
import { isDatabaseUnavailable } from './connectionErrors.js';

/**
 * Runs `work` in one transaction on a client of the raw pool. Used where service-table
 * writes and log-table DDL or bulk writes must commit together (knex cannot share a pg client).
 */
export async function withTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A client whose connection is lost or stalled ('Query read timeout', pool.ts) is dropped,
  // not returned to the pool: a stalled one would hand its stuck queue to the next request.
  // No ROLLBACK is sent on it (it would wait out another read timeout); a failed ROLLBACK
  // also drops the client (test/hardening/faults.test.ts, "withTransaction").
  let drop: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    if (isDatabaseUnavailable(err)) drop = err as Error;
    else await client.query('ROLLBACK').catch((rollbackErr: Error) => (drop = rollbackErr));
    throw err;
  } finally {
    client.release(drop);
  }
}

/** Runs a knex-built statement on a pg client (so it can join that client's transaction). */
export async function runBuilt<R extends pg.QueryResultRow = pg.QueryResultRow>(
  client: pg.PoolClient,
  builder: Knex.QueryBuilder | Knex.Raw,
): Promise<R[]> {
  const { sql, bindings } = builder.toSQL().toNative();
  const result = await client.query<R>(sql, bindings as unknown[]);
  return result.rows;
}
