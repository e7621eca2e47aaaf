/**
 * One answer to "did this fail because the database is not there?", for the three places that
 * ask it: the error middleware (503), and the two places that must drop a pooled client rather
 * than return it (query/execute.ts, db/transaction.ts).
 */

/** Node socket errors, Postgres connection classes (08, 57P: shutdown) and "too many connections". */
const NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

/**
 * pg's messages without a SQLSTATE: no free connection in time; a connection closed under a
 * query; a pooled client whose connection the database closed between two queries ("is not
 * queryable"); no answer at all past the client-side read limit (db/pool.ts).
 */
const LOST_MESSAGE = /timeout exceeded when trying to connect|Connection terminated|is not queryable|Query read timeout/i;

export function isDatabaseUnavailable(err: unknown): boolean {
  const e = (err ?? {}) as { code?: string; message?: string; name?: string };
  const code = e.code ?? '';
  if (NODE_CODES.has(code) || code.startsWith('08') || code.startsWith('57P') || code === '53300') return true;
  // KnexTimeoutError: the admin (knex) pool found no connection within DB_CONNECT_TIMEOUT_MS.
  return e.name === 'KnexTimeoutError' || LOST_MESSAGE.test(e.message ?? '');
}
