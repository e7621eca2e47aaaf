/**
 * What went wrong with a query, told to the caller: a translator error (SqlError) becomes a 400
 * naming where it is (the endpoint's query, `sql=` or `lql=`), and a Postgres error that is about
 * what the caller sent becomes a 400; everything else goes on to the error middleware. Shared by
 * endpoint queries (src/endpoints/queryService.ts) and source search (src/lql/search.ts).
 */
import { BadRequestError, type ErrorDetail } from '../errors.js';
import type { SqlError } from '../sql/index.js';

/** A translation problem: 400 naming line, column and the construct. */
export function sqlBadRequest(err: SqlError, where: 'query' | 'sql' | 'lql'): BadRequestError {
  const location = `${where}:${err.line}:${err.column}`;
  const domain = where === 'query' ? 'endpoint' : where === 'sql' ? 'sandbox' : 'lql';
  const detail: ErrorDetail = { domain, reason: err.name, message: err.message, location };
  const prefix = where === 'query' ? "The endpoint's query" : `The "${where}" parameter`;
  return new BadRequestError(`${prefix} cannot run: ${err.message}`, [detail]);
}

/**
 * Postgres errors that are about what the caller sent: a bad ISO timestamp or regular
 * expression (class 22, data exception), a sandbox rule enforced by the reader role (42501),
 * a query Postgres refuses (classes 21 and 42), a program limit (class 54: an expression too deep,
 * a string past 1 GB).
 * Everything else goes on to the error middleware (503, 504, 500).
 */
export function queryError(err: unknown): unknown {
  const e = err as { code?: string; message?: string };
  if (!e.code) return err;
  if (e.code.startsWith('22')) {
    return new BadRequestError(`A parameter value was rejected by the database: ${firstLine(e.message)}.`, [
      { domain: 'params', reason: 'invalidParameter', message: firstLine(e.message) },
    ]);
  }
  if (e.code === '42501')
    return new BadRequestError('The query tried to read something outside the endpoint.', [
      { domain: 'sandbox', reason: 'forbidden', message: 'permission denied' },
    ]);
  // security: caller SQL that passes both walls can still fail in Postgres: a scalar subquery
  // returning several rows (21000), or names that Postgres truncates to 63 bytes and then finds
  // duplicate or ambiguous (42712, 42702; class 42). That is bad input, so 400, not a 500 per
  // request in the error log (test/hardening/hostile-http.test.ts, runtimeErrors).
  if (e.code === '42803') {
    // Postgres quotes the column (`column "t0.body" must appear in the GROUP BY clause …`), which
    // firstLine cuts; the rule is BigQuery's too.
    return new BadRequestError(
      'The query cannot run: a selected expression is neither grouped nor aggregated; add it to GROUP BY or aggregate it.',
      [{ domain: 'sql', reason: 'invalidQuery', message: 'expression neither grouped nor aggregated' }],
    );
  }
  if (e.code.startsWith('21') || e.code.startsWith('42')) {
    return new BadRequestError(`The query cannot run: ${firstLine(e.message)}.`, [
      { domain: 'sql', reason: 'invalidQuery', message: firstLine(e.message) },
    ]);
  }
  if (e.code === '54001') return new BadRequestError('The query is too deeply nested.');
  // security: a value past Postgres' own limits (a string_agg over a cross join reaching the
  // 1 GB string limit, 54000) is what the caller asked for: 400, not a 500 per request. Which
  // of this and the statement timeout comes first depends on how fast the machine is
  // (test/hardening/hostile-http.test.ts, bigStrings).
  if (e.code.startsWith('54')) {
    return new BadRequestError(`The query exceeds a database limit: ${firstLine(e.message)}.`, [
      { domain: 'sql', reason: 'limitExceeded', message: firstLine(e.message) },
    ]);
  }
  return err;
}

/**
 * security: the first line of a Postgres message, cut before the first double quote. Data errors
 * quote the offending value (`invalid input syntax for type boolean: "…"`), and Postgres may
 * evaluate a caller's condition on rows that an endpoint CTE's own filter would drop, so the
 * value can be a row the caller may not read (test/hardening/hostile-http.test.ts, "rows outside a CTE").
 */
function firstLine(message: string | undefined): string {
  const line = (message ?? '').split('\n')[0];
  const quote = line.indexOf('"');
  return (quote < 0 ? line : line.slice(0, quote).replace(/[\s:]+$/, '')).slice(0, 300);
}
