/**
 * Runs one translated endpoint query: the third wall of sandboxing (SECURITY.md).
 *
 *   BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL ROLE logquery_reader;
 *   SET LOCAL statement_timeout …; TimeZone UTC; jit off; standard_conforming_strings on
 *   <the query, as an unnamed prepared statement with its $n values, so the planner sees them>
 *   ROLLBACK
 *
 * The role can only SELECT log tables; the transaction cannot write; the timeout cancels the
 * backend itself, so a runaway query frees its connection; the ROLLBACK undoes whatever the
 * query changed in the session (`set_config(…, false)` included), so nothing of one query
 * reaches the next one on the pooled connection.
 *
 * REPEATABLE READ: the planner reads the facts of hot leaf columns while planning
 * (src/sql/resolve/hot.ts, src/storage/hotLeafFacts.ts), and the executor reads the rows those
 * facts describe. Under READ COMMITTED planning and execution take two snapshots, and a batch
 * committed between them (with a value that makes a column inexact) would be read through a plan
 * that reads the column alone. One snapshot for both costs nothing for one read-only statement.
 *
 * On Postgres all of it goes out as one pipelined batch with one Sync (src/db/pipelined.ts): one
 * round trip per query instead of three. Postgres skips everything after a failed statement up to
 * the Sync, so the query never runs outside the transaction or without its settings, and a failed
 * query leaves the transaction open for the ROLLBACK below. statement_timeout holds per statement
 * as in separate round trips: in the extended protocol its timer starts at the first message of a
 * statement with the setting in force then. The embedded PGlite keeps the three round trips
 * (`pipelined: false`).
 */
import type pg from 'pg';
import { BadRequestError } from '../errors.js';
import { RAW_TYPES } from './encode.js';
import { isDatabaseUnavailable } from '../db/connectionErrors.js';
import { runPipelined, toWireValue, watchReceivedBytes } from '../db/pipelined.js';
import { MAX_RESULT_BYTES } from '../inputLimits.js';
import { PLANNER_SETTINGS, READER_ROLE, readOnlySessionOf, type ReadOnlySession } from '../db/readOnlySession.js';

export interface QueryRun {
  fields: Array<{ name: string; dataTypeID: number }>;
  rows: Array<Array<string | null>>;
}

export interface ExecuteOptions {
  timeoutMs: number;
  /** Off only where the database has no roles to switch to (asked at start: `db.capabilities.readerRole`, src/db/capabilities.ts). */
  useReaderRole: boolean;
  /** Cap on the bytes of the result read from the database (default MAX_RESULT_BYTES). */
  maxResultBytes?: number;
  /**
   * The whole transaction in one round trip (default). `false`: BEGIN…, the query and ROLLBACK as
   * three round trips, for servers that are not known to take a pipelined batch (the embedded PGlite).
   */
  pipelined?: boolean;
  /**
   * Plan without parallel workers: the fair scheduler's answer for a key above its share while
   * another key wants the database (src/rateLimit/scheduler.ts). Workers take cores too.
   */
  serial?: boolean;
  /**
   * `SET LOCAL work_mem` in kB for this query: the hourly split's partial queries group by hour ×
   * keys, ~100 times the groups of the query whole, and with the default 4 MB the planner sorts
   * them on disk instead of hashing them in memory (2–3 times slower; src/query/hourlySplit.ts).
   */
  workMemKb?: number;
}

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
  // Values are mapped to wire text first (as pg does), so a value pg cannot send fails here,
  // before anything of the transaction is written to the connection.
  const params = values.map(toWireValue);
  const client = await pool.connect();
  const timeoutMs = Math.floor(options.timeoutMs);
  const query_timeout = timeoutMs + READ_TIMEOUT_GRACE_MS;
  let broken = false;
  let rollback = true;
  const limit = options.maxResultBytes ?? MAX_RESULT_BYTES;
  let bytes: ReturnType<typeof watchReceivedBytes> | undefined;
  // The dropped connection surfaces as a client 'error' event; the pool listens only while idle.
  const ignore = () => undefined;
  try {
    const start = transactionStart(options.useReaderRole ? undefined : readOnlySessionOf(pool), options.useReaderRole, timeoutMs);
    if (options.serial) start.push('SET LOCAL max_parallel_workers_per_gather = 0');
    if (options.workMemKb !== undefined) start.push(`SET LOCAL work_mem = ${Math.floor(options.workMemKb)}`);
    client.on('error', ignore);
    bytes = watchReceivedBytes(client, limit);
    if (options.pipelined === false) {
      await client.query({ text: start.join('; '), query_timeout } as pg.QueryConfig);
      // security: always the extended protocol (one statement per Parse). Without values `pg` would
      // use the simple protocol, where `SELECT 1; COMMIT; …` runs several statements and the ones
      // after COMMIT escape the read-only transaction and the reader role.
      // (`queryMode` is a pg ≥ 8.10 option that @types/pg does not declare yet.)
      const query: pg.QueryArrayConfig & { queryMode: 'extended'; query_timeout: number } = {
        text: sql,
        values: params,
        rowMode: 'array',
        types: RAW_TYPES,
        queryMode: 'extended',
        query_timeout,
      };
      const result = await client.query(query);
      return { fields: result.fields, rows: result.rows as Array<Array<string | null>> };
    }
    const run = await runPipelined(client, { before: start, query: { text: sql, values: params }, after: ['ROLLBACK'] }, query_timeout);
    // The batch ended with ROLLBACK: the connection is idle again, unless something kept a
    // transaction open (then roll it back like after an error).
    rollback = client.getTransactionStatus() !== 'I';
    return run;
  } catch (err) {
    const tooLarge = bytes?.exceeded === true;
    broken = tooLarge || isConnectionError(err);
    if (tooLarge) {
      throw new BadRequestError(`The result is larger than ${Math.round(limit / 1024 / 1024)} MB; select fewer rows or smaller values.`, [
        { domain: 'sql', reason: 'resultTooLarge', message: `result larger than ${limit} bytes` },
      ]);
    }
    throw err;
  } finally {
    bytes?.stop();
    if (!broken && rollback) await client.query('ROLLBACK').catch(() => (broken = true));
    if (!broken) client.removeListener('error', ignore); // a dropped client may still report its end
    client.release(broken);
  }
}

const BEGIN = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

/**
 * The statements that open the read-only transaction of one query, each a statement of its own.
 *
 * On a pool of read-only sessions (src/db/readOnlySession.ts) the settings are already those of the connection, and
 * only statement_timeout is set when this query's limit differs from the connection's.
 *
 * security: standard_conforming_strings is forced on because the printer escapes string literals
 * by doubling quotes only and wall 2 (libpg-query) parses with it on; a database or role
 * configured with it off would read `'\''` as an escaped quote and let a caller's literal end
 * early and inject SQL (test/security/walls.test.ts).
 */
function transactionStart(session: ReadOnlySession | undefined, useReaderRole: boolean, timeoutMs: number): string[] {
  if (session) return [BEGIN, ...(session.statementTimeoutMs === timeoutMs ? [] : [`SET LOCAL statement_timeout = ${timeoutMs}`])];
  return [
    BEGIN,
    ...(useReaderRole ? [`SET LOCAL ROLE ${READER_ROLE}`] : []),
    `SET LOCAL statement_timeout = ${timeoutMs}`,
    "SET LOCAL TimeZone = 'UTC'",
    ...Object.entries(PLANNER_SETTINGS).map(([name, value]) => `SET LOCAL ${name} = ${value}`),
    'SET LOCAL standard_conforming_strings = on',
  ];
}

/** A client is dropped after a failure without a SQLSTATE too: its connection state is unknown. */
function isConnectionError(err: unknown): boolean {
  return !(err as { code?: string }).code || isDatabaseUnavailable(err);
}
