import assert from 'node:assert/strict';
import pg from 'pg';
import { migrateUp } from '../../src/db/migrate.js';
import { createEmptyDatabase, dropDatabase } from '../support/db.js';

describe('migrations', function () {
  // A hang guard, not a speed bound: the migrations create the cluster-wide reader role and wait
  // for its catalog locks and for checkpoints other databases' DROPs request; on a cluster shared
  // with another run's tests, 20 s ran out twice (ci-f, load ~7), alone they take ~1 s.
  this.timeout(120_000);
  it('when run on an empty database, then they create the service tables, schema logs and the reader role; a second run does nothing', async () => {
    const { url, name } = await createEmptyDatabase('lq_migrate');
    try {
      const first = await migrateUp(url);
      assert.ok(first.length >= 2, `expected migrations to run, got ${first.join(',')}`);
      const second = await migrateUp(url);
      assert.deepEqual(second, []);

      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows: tables } = await client.query(
          `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name IN ('endpoints','sources','api_keys') ORDER BY 1`,
        );
        assert.deepEqual(
          tables.map((r) => r.table_name),
          ['api_keys', 'endpoints', 'sources'],
        );
        const { rows: schema } = await client.query(`SELECT 1 FROM pg_namespace WHERE nspname = 'logs'`);
        assert.equal(schema.length, 1);
        // (LOGIN is given by the service at start, not by the migration: src/db/readerPool.ts.)
        const { rows: role } = await client.query(
          `SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = 'logquery_reader'`,
        );
        assert.deepEqual(role, [{ rolsuper: false, rolcreaterole: false, rolcreatedb: false }]);
      } finally {
        await client.end();
      }
    } finally {
      await dropDatabase(name);
    }
  });

  it('when two processes migrate the same empty database at once, then both succeed', async () => {
    const { url, name } = await createEmptyDatabase('lq_migrate');
    try {
      const [a, b] = await Promise.all([migrateUp(url), migrateUp(url)]);
      assert.equal(a.length + b.length, Math.max(a.length, b.length), 'each migration ran exactly once');
    } finally {
      await dropDatabase(name);
    }
  });
});
