/**
 * The embedded database (PGlite, the default without DATABASE_URL) runs the same migrations and
 * must answer the function library as Postgres does: the TIME, JSON and RANGE types' documented examples
 * (test/support/libraryExamples.ts) on a PGlite of its own, migrated as the service migrates it.
 */
import { rejects } from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.js';
import { migrateUp } from '../../src/db/migrate.js';
import { JSON_TYPE_EXAMPLES, RANGE_EXAMPLES, TIME_EXAMPLES } from '../support/libraryExamples.js';
import { expectTranslation } from '../support/translation.js';

describe('library on PGlite: the TIME, JSON and RANGE types', function () {
  this.timeout(120_000);

  let dataDir: string;
  let embedded: EmbeddedPostgres | undefined;
  let pool: pg.Pool | undefined;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'logquery-library-'));
    embedded = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'data'), port: 0 });
    await migrateUp(embedded.url);
    pool = new pg.Pool({ connectionString: embedded.url, max: 2 });
    pool.on('error', () => {});
  });

  after(async () => {
    await pool?.end();
    await embedded?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  for (const [name, bq, rows] of [...TIME_EXAMPLES, ...JSON_TYPE_EXAMPLES, ...RANGE_EXAMPLES]) {
    it(`when ${name}, then the documented result on PGlite`, async () => {
      await expectTranslation(bq, { pool }).toReturn(rows);
    });
  }

  it('when BigQuery raises an error for a range, then the query fails on PGlite too, and SAFE_CAST is NULL', async () => {
    await rejects(
      expectTranslation(`select cast(s as range<date>) as x from unnest(['[2020-01-02, 2020-01-01)']) as s`, { pool }).toReturn([]),
      /not before the upper bound/,
    );
    await expectTranslation(`select safe_cast(s as range<date>) as x from unnest(['[2020-01-01, 2020-02-30)']) as s`, { pool }).toReturn([
      { x: null },
    ]);
  });

  it('when BigQuery raises an error for a JSON value, then the query fails on PGlite too', async () => {
    await rejects(expectTranslation(`select int64(json '10.1') as x`, { pool }).toReturn([]), /not a number of the INT64 domain/);
    await rejects(
      expectTranslation(`select parse_json('{"id": 922337203685477580701}') as x`, { pool }).toReturn([]),
      /without loss of precision/,
    );
  });
});
