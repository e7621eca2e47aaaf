/**
 * What this database can do, asked once when the service opens it (`db.capabilities`), so no
 * module probes or guesses on its own. The service runs on Postgres, and on PGlite (the embedded
 * default, or any pglite-socket server a DATABASE_URL points at), which differs in what follows.
 */
import type pg from 'pg';
import { READER_ROLE } from './readOnlySession.js';

export interface DatabaseCapabilities {
  /**
   * PGlite, recognised by its version string ("PostgreSQL 18.6 (PGlite 0.5.14) on
   * wasm32-unknown-emscripten…"), never by trying what could take it down (src/ingest/write.ts).
   */
  readonly pglite: boolean;
  /**
   * Takes several statements as one pipelined batch with one Sync (src/db/pipelined.ts).
   * PGlite is not known to: it gets the three round trips of src/query/execute.ts.
   */
  readonly pipelinedBatch: boolean;
  /** Takes `COPY … FROM STDIN`; PGlite over its socket cannot (src/ingest/write.ts, rowWriterFor). */
  readonly copyFromStdin: boolean;
  /** Can compress TOASTed values with lz4 (Postgres 14+ built with it; src/storage/logTables.ts). */
  readonly lz4: boolean;
  /** The service's login may `SET LOCAL ROLE` to the reader role (sandbox wall 3; PGlite may not). */
  readonly readerRole: boolean;
}

/** Asks the database once; after migrations, which create the reader role. */
export async function probeCapabilities(pool: pg.Pool): Promise<DatabaseCapabilities> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ version: string; lz4: boolean | null }>(
      `SELECT version() AS version,
              (SELECT 'lz4' = ANY (enumvals) FROM pg_settings WHERE name = 'default_toast_compression') AS lz4`,
    );
    const pglite = /PGlite/i.test(rows[0]?.version ?? '');
    let readerRole = true;
    try {
      await client.query(`BEGIN; SET LOCAL ROLE ${READER_ROLE}`);
    } catch {
      readerRole = false;
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
    }
    return { pglite, pipelinedBatch: !pglite, copyFromStdin: !pglite, lz4: rows[0]?.lz4 === true, readerRole };
  } finally {
    client.release();
  }
}
