/**
 * Connections that log in as the reader role, for endpoint queries.
 *
 * `SET LOCAL ROLE logquery_reader` on the service's own connections is undone by
 * `set_config('role', 'none', true)`, which switches back to the login user: the third wall
 * then holds only because walls 1 and 2 refuse set_config. Logging in as the reader makes the
 * wall hold on its own: `none` resets to the reader itself.
 *
 * The reader gets LOGIN and, when the service's URL has a password, a password derived from it
 * (HMAC), so every replica with the same DATABASE_URL computes the same one and none needs
 * another secret. When that cannot be done (no CREATEROLE right, pg_hba refuses the user, the
 * embedded database), the service falls back to SET LOCAL ROLE and logs why.
 *
 * The connections start with the settings of an endpoint query's transaction (read only,
 * statement_timeout = QUERY_TIMEOUT_MS, TimeZone UTC, the planner settings, standard_conforming_strings on:
 * readOnlySessionOptions), so a query on them needs only BEGIN READ ONLY, itself and ROLLBACK
 * (src/query/execute.ts). Use them only through executeReadOnly, whose ROLLBACK keeps the
 * session as it started.
 */
import { createHmac } from 'node:crypto';
import type pg from 'pg';
import { READER_ROLE, readOnlySessionOptions, registerReadOnlySession } from './readOnlySession.js';
import { createPgPool, onPrimary, type Database, type DatabaseOptions } from './pool.js';

export function readerUrl(serviceUrl: string): { url: string; password: string | undefined } {
  const url = new URL(serviceUrl);
  const password = url.password ? createHmac('sha256', decodeURIComponent(url.password)).update(READER_ROLE).digest('hex') : undefined;
  url.username = READER_ROLE;
  url.password = password ?? '';
  return { url: url.toString(), password };
}

export async function openReaderPool(
  db: Database,
  options: Omit<DatabaseOptions, 'url'> & { statementTimeoutMs: number },
): Promise<pg.Pool | { unavailable: string }> {
  const { password } = readerUrl(db.url);
  const { statementTimeoutMs, ...poolOptions } = options;
  // In HA mode the reader's connections on the primary follow it too (src/db/primary.ts).
  const pool = onPrimary(db, (primaryUrl) =>
    createPgPool({ ...poolOptions, url: readerUrl(primaryUrl).url }, 'logquery-reader', readOnlySessionOptions(statementTimeoutMs)),
  );
  registerReadOnlySession(pool, statementTimeoutMs);
  if ((await logsInAsReader(pool)) === true) return pool;
  // ALTER ROLE takes no bind parameters; the password is hex, so quoting it is safe. It may fail
  // because another process of this cluster altered the role at the same moment: then the
  // second login attempt tells.
  const altered = await db.pool.query(`ALTER ROLE ${READER_ROLE} LOGIN${password ? ` PASSWORD '${password}'` : ''}`).then(
    () => undefined,
    (err: Error) => err.message,
  );
  const second = await logsInAsReader(pool);
  if (second === true) return pool;
  await pool.end();
  return {
    unavailable: altered
      ? `cannot give ${READER_ROLE} a login (${altered})`
      : `cannot log in as ${READER_ROLE} (${second}; check pg_hba.conf)`,
  };
}

/** True, or why not (the login or a startup option was refused). */
async function logsInAsReader(pool: pg.Pool): Promise<true | string> {
  try {
    const { rows } = await pool.query<{ who: string }>('SELECT current_user AS who');
    return rows[0]?.who === READER_ROLE || `logged in as ${String(rows[0]?.who)}`;
  } catch (err) {
    return (err as Error).message;
  }
}
