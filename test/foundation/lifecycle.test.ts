/**
 * Start and stop inside one process: a start that fails half-way closes what it opened (pools,
 * the embedded database), a context's close goes on past a failing part, and stopping within a
 * deadline reports failures and lateness as an exit code and log lines, never as an unhandled
 * rejection.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { createLogger } from '../../src/logger.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { stopWithin } from '../../src/lifecycle.js';
import { ADMIN_URL, createEmptyDatabase, testConfig } from '../support/db.js';
import { eventually } from '../support/wait.js';
import { capturingLogger } from '../support/log.js';
import { failOnUnhandledRejections } from '../support/rejections.js';

/** Connections to database `name` other than this query's own. */
async function connectionsTo(name: string): Promise<number> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
      name,
    ]);
    return rows[0].n;
  } finally {
    await admin.end();
  }
}

async function onDatabase(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe('start and stop', function () {
  this.timeout(90_000);
  failOnUnhandledRejections();

  describe('a start that fails half-way', () => {
    it('when the migrations fail, then createContext rejects and leaves no connection to the database', async () => {
      const { url, name } = await createEmptyDatabase('lq_life_migrate');
      // A migration recorded as run that this version does not have: node-pg-migrate refuses to go on.
      await onDatabase(
        url,
        "CREATE TABLE pgmigrations (id serial PRIMARY KEY, name varchar(255) NOT NULL, run_on timestamp NOT NULL); INSERT INTO pgmigrations (name, run_on) VALUES ('0000000000000_from_the_future', now())",
      );
      await assert.rejects(createContext(testConfig(url), createLogger('silent')));
      assert.ok(await eventually(async () => (await connectionsTo(name)) === 0, 5_000), `connections left: ${await connectionsTo(name)}`);
    });

    it('when a step after the pools are open fails, then createContext rejects with its error and closes the pools', async () => {
      const { url, name } = await createEmptyDatabase('lq_life_later');
      const first = await createContext(testConfig(url), createLogger('silent'));
      await first.close();
      // The seeded endpoints cannot be written: the step fails with the service and admin pools open.
      await onDatabase(url, 'ALTER TABLE endpoints RENAME TO endpoints_elsewhere');
      await assert.rejects(createContext(testConfig(url), createLogger('silent')), (e: { code?: string }) => e.code === '42P01');
      assert.ok(await eventually(async () => (await connectionsTo(name)) === 0, 5_000), `connections left: ${await connectionsTo(name)}`);
    });

    it('when a step fails on the embedded database, then the embedded database is stopped (its lock released, its data flushed)', async () => {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lq-life-embedded-'));
      const config = loadConfig({ DATA_DIR: dataDir, LOAD_DEMO_DATA: 'false', LOG_LEVEL: 'silent' });
      try {
        const first = await createContext(config, createLogger('silent'));
        await first.db.pool.query('ALTER TABLE endpoints RENAME TO endpoints_elsewhere');
        await first.close();
        await assert.rejects(createContext(config, createLogger('silent')), (e: { code?: string }) => e.code === '42P01');
        assert.equal(existsSync(path.join(dataDir, 'logquery.lock')), false, 'the lock of the embedded database is released');
        // What the failed start saw is on disk: the data directory opens again with the rename in it.
        const again = await startEmbeddedPostgres({ dataDir });
        try {
          const client = new pg.Client({ connectionString: again.url });
          await client.connect();
          const { rows } = await client.query("SELECT to_regclass('endpoints_elsewhere') IS NOT NULL AS kept");
          await client.end();
          assert.equal(rows[0].kept, true);
        } finally {
          await again.stop();
        }
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  });

  describe("a context's close", () => {
    it('when one part fails to close, then the others are still closed and close rejects naming the part', async () => {
      const { url, name } = await createEmptyDatabase('lq_life_close');
      const ctx = await createContext(testConfig(url), createLogger('silent'));
      assert.ok(ctx.reader, 'the reader pool is open on this database');
      await ctx.db.pool.query('SELECT 1');
      await ctx.reader.end(); // ending it again fails
      await assert.rejects(ctx.close(), /closing failed: reader pool: /);
      assert.ok(await eventually(async () => (await connectionsTo(name)) === 0, 5_000), `connections left: ${await connectionsTo(name)}`);
      await ctx.close(); // a second close has nothing left to do
    });
  });

  describe('stopWithin', () => {
    it('when every step finishes, then it resolves 0 after running them in order', async () => {
      const { logger, lines } = capturingLogger();
      const ran: string[] = [];
      assert.equal(
        await stopWithin(1_000, logger, [
          { name: 'a', run: () => void ran.push('a') },
          { name: 'b', run: async () => void ran.push('b') },
        ]),
        0,
      );
      assert.deepEqual(ran, ['a', 'b']);
      assert.deepEqual(lines, []);
    });

    it('when a step rejects, then the next steps still run, the failure is logged and it resolves 1', async () => {
      const { logger, lines } = capturingLogger();
      const ran: string[] = [];
      const code = await stopWithin(1_000, logger, [
        { name: 'pools', run: () => Promise.reject(new Error('pool refused to end')) },
        { name: 'cache', run: () => void ran.push('cache') },
      ]);
      assert.equal(code, 1);
      assert.deepEqual(ran, ['cache']);
      assert.equal(lines.length, 1);
      assert.match(lines[0].msg, /a step failed/);
      assert.equal(lines[0].step, 'pools');
      assert.equal(lines[0].err, 'pool refused to end');
    });

    it('when a step is still running at the deadline, then it resolves 1 and logs the step; a later rejection of that step stays handled', async () => {
      const { logger, lines } = capturingLogger();
      let fail!: (err: Error) => void;
      const code = await stopWithin(100, logger, [
        { name: 'in-flight requests', run: () => new Promise<void>((_, reject) => (fail = reject)) },
      ]);
      assert.equal(code, 1);
      assert.equal(lines.length, 1);
      assert.match(lines[0].msg, /not done within 100 ms \(SHUTDOWN_TIMEOUT_MS\)/);
      assert.equal(lines[0].step, 'in-flight requests');
      fail(new Error('gave up late'));
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(lines.length, 2, 'the late failure is logged');
    });
  });
});
