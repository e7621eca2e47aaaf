/**
 * Runs one translated endpoint query: the third wall of sandboxing (DESIGN.md).
 *
 *   BEGIN READ ONLY; SET LOCAL ROLE logquery_reader; SET LOCAL statement_timeout …; TimeZone UTC; jit off
 *   <the query, as an unnamed prepared statement with its $n values, so the planner sees them>
 *   ROLLBACK
 *
 * The role can only SELECT log tables; the transaction cannot write; the timeout cancels the
 * backend itself, so a runaway query frees its connection.
 */
import type pg from 'pg';
import { RAW_TYPES } from './encode.js';

export interface QueryRun {
  fields: Array<{ name: string; dataTypeID: number }>;
  rows: Array<Array<string | null>>;
}

export interface ExecuteOptions {
  timeoutMs: number;
  /** Off only where the database has no roles to switch to (checked at start, see `supportsReaderRole`). */
  useReaderRole: boolean;
}

export const READER_ROLE = 'logquery_reader';

export async function executeReadOnly(pool: pg.Pool, sql: string, values: unknown[], options: ExecuteOptions): Promise<QueryRun> {
  const client = await pool.connect();
  let broken = false;
  try {
    const role = options.useReaderRole ? `SET LOCAL ROLE ${READER_ROLE}; ` : '';
    // security: standard_conforming_strings is forced on because the printer escapes string
    // literals by doubling quotes only and wall 2 (libpg-query) parses with it on; a database or
    // role configured with it off would read `'\''` as an escaped quote and let a caller's
    // literal end early and inject SQL (test/security/walls.test.ts).
    await client.query(
      `BEGIN READ ONLY; ${role}SET LOCAL statement_timeout = ${Math.floor(options.timeoutMs)}; SET LOCAL TimeZone = 'UTC'; SET LOCAL jit = off; SET LOCAL standard_conforming_strings = on`,
    );
    // security: always the extended protocol (one statement per Parse). Without values `pg` would
    // use the simple protocol, where `SELECT 1; COMMIT; …` runs several statements and the ones
    // after COMMIT escape the read-only transaction and the reader role.
    // (`queryMode` is a pg ≥ 8.10 option that @types/pg does not declare yet.)
    const query: pg.QueryArrayConfig & { queryMode: 'extended' } = { text: sql, values, rowMode: 'array', types: RAW_TYPES, queryMode: 'extended' };
    const result = await client.query(query);
    return { fields: result.fields, rows: result.rows as Array<Array<string | null>> };
  } catch (err) {
    broken = isConnectionError(err);
    throw err;
  } finally {
    if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
    client.release(broken);
  }
}

function isConnectionError(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return !e.code || e.code.startsWith('08') || e.code.startsWith('57P') || /Connection terminated/i.test(e.message ?? '');
}

/** Whether this database lets the service switch to the reader role (PGlite, for one, may not). */
export async function supportsReaderRole(pool: pg.Pool): Promise<boolean> {
  const client = await pool.connect();
  try {
    await client.query(`BEGIN; SET LOCAL ROLE ${READER_ROLE}`);
    return true;
  } catch {
    return false;
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}
