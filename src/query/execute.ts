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
import { BadRequestError } from '../errors.js';
import { RAW_TYPES } from './encode.js';
import { isDatabaseUnavailable } from '../db/connectionErrors.js';

export interface QueryRun {
  fields: Array<{ name: string; dataTypeID: number }>;
  rows: Array<Array<string | null>>;
}

export interface ExecuteOptions {
  timeoutMs: number;
  /** Off only where the database has no roles to switch to (checked at start, see `supportsReaderRole`). */
  useReaderRole: boolean;
  /** Cap on the bytes of the result read from the database (default MAX_RESULT_BYTES). */
  maxResultBytes?: number;
}

export const READER_ROLE = 'logquery_reader';

/**
 * security: max rows bound the number of rows, not their size. One `string_agg` over a cross join
 * of CTEs builds a value of hundreds of MB in well under the time limit; `pg` buffers a whole row
 * before parsing it, so one request took the process to 1.1 GB and answered after 10 s (with a
 * 2 s limit), or answered 200 with a body over 200 MB. Past this many bytes the connection is
 * dropped (the backend stops at its next write) and the caller gets 400.
 */
export const MAX_RESULT_BYTES = 64 * 1024 * 1024;

/**
 * How long past its statement_timeout a query may go without an answer before the client gives
 * up on the connection. statement_timeout is enforced by the server: a connection that stops
 * passing data (network partition, frozen database host) never sends the cancellation, and the
 * request hung until TCP gave up, minutes later (test/hardening/faults.test.ts, "stalls").
 * 'Query read timeout' has no SQLSTATE, so the client is dropped as broken and the request
 * answers 503 (errorMiddleware.ts).
 */
export const READ_TIMEOUT_GRACE_MS = 5_000;

export async function executeReadOnly(pool: pg.Pool, sql: string, values: unknown[], options: ExecuteOptions): Promise<QueryRun> {
  const client = await pool.connect();
  const query_timeout = Math.floor(options.timeoutMs) + READ_TIMEOUT_GRACE_MS;
  let broken = false;
  const limit = options.maxResultBytes ?? MAX_RESULT_BYTES;
  const stream = (client as unknown as { connection?: { stream?: NodeJS.ReadableStream & { destroy(): void } } }).connection?.stream;
  let received = 0;
  let tooLarge = false;
  const count = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit && !tooLarge) {
      tooLarge = true;
      stream!.destroy();
    }
  };
  // The dropped connection surfaces as a client 'error' event; the pool listens only while idle.
  const ignore = () => undefined;
  try {
    const role = options.useReaderRole ? `SET LOCAL ROLE ${READER_ROLE}; ` : '';
    // security: standard_conforming_strings is forced on because the printer escapes string
    // literals by doubling quotes only and wall 2 (libpg-query) parses with it on; a database or
    // role configured with it off would read `'\''` as an escaped quote and let a caller's
    // literal end early and inject SQL (test/security/walls.test.ts).
    const begin: pg.QueryConfig & { query_timeout: number } = {
      text: `BEGIN READ ONLY; ${role}SET LOCAL statement_timeout = ${Math.floor(options.timeoutMs)}; SET LOCAL TimeZone = 'UTC'; SET LOCAL jit = off; SET LOCAL standard_conforming_strings = on`,
      query_timeout,
    };
    await client.query(begin);
    // security: always the extended protocol (one statement per Parse). Without values `pg` would
    // use the simple protocol, where `SELECT 1; COMMIT; …` runs several statements and the ones
    // after COMMIT escape the read-only transaction and the reader role.
    // (`queryMode` is a pg ≥ 8.10 option that @types/pg does not declare yet.)
    const query: pg.QueryArrayConfig & { queryMode: 'extended'; query_timeout: number } = { text: sql, values, rowMode: 'array', types: RAW_TYPES, queryMode: 'extended', query_timeout };
    client.on('error', ignore);
    stream?.on('data', count);
    const result = await client.query(query);
    return { fields: result.fields, rows: result.rows as Array<Array<string | null>> };
  } catch (err) {
    broken = tooLarge || isConnectionError(err);
    if (tooLarge) {
      throw new BadRequestError(`The result is larger than ${Math.round(limit / 1024 / 1024)} MB; select fewer rows or smaller values.`, [
        { domain: 'sql', reason: 'resultTooLarge', message: `result larger than ${limit} bytes` },
      ]);
    }
    throw err;
  } finally {
    stream?.removeListener('data', count);
    if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
    if (!broken) client.removeListener('error', ignore); // a dropped client may still report its end
    client.release(broken);
  }
}

/** A client is dropped after a failure without a SQLSTATE too: its connection state is unknown. */
function isConnectionError(err: unknown): boolean {
  return !(err as { code?: string }).code || isDatabaseUnavailable(err);
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
