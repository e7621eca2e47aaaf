/**
 * HA mode's pieces on the real Postgres (src/db/databaseUrl.ts, src/db/primary.ts): libpq's
 * multi-host DATABASE_URL, finding the host that takes writes among hosts that are down, and
 * what the pools answer while none does. The failover itself, on a real engine, is
 * test/hardening/failover.test.ts.
 */
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { splitDatabaseUrl } from '../../src/db/databaseUrl.js';
import { FailoverPool, NoPrimaryError, PrimaryLocator } from '../../src/db/primary.js';
import { isDatabaseUnavailable } from '../../src/db/connectionErrors.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createPgPool, openDatabase } from '../../src/db/pool.js';
import { freePort } from '../support/net.js';
import { ADMIN_URL, createEmptyDatabase } from '../support/db.js';
import { eventually } from '../support/wait.js';
import pg from 'pg';

const logger = createLogger('silent');

describe('db: multi-host DATABASE_URL', () => {
  it('splits libpq host lists into one URL per host, keeping credentials, database and other options', () => {
    const split = splitDatabaseUrl('postgres://u:p%40ss@h1:5433,h2,[::1]:6000/logs?sslmode=disable&target_session_attrs=read-write');
    assert.deepEqual(split, {
      urls: [
        'postgres://u:p%40ss@h1:5433/logs?sslmode=disable',
        'postgres://u:p%40ss@h2:5432/logs?sslmode=disable',
        'postgres://u:p%40ss@[::1]:6000/logs?sslmode=disable',
      ],
      findPrimary: true,
    });
    assert.deepEqual(splitDatabaseUrl('postgresql://h1:1,h2:2/db').findPrimary, true);
    assert.deepEqual(splitDatabaseUrl('postgresql://h1/db?target_session_attrs=primary'), {
      urls: ['postgresql://h1:5432/db'],
      findPrimary: true,
    });
    assert.deepEqual(splitDatabaseUrl('postgresql://h1:1,h2:2/db?target_session_attrs=any').findPrimary, true);
  });

  it('leaves a one-host URL exactly as it is (no HA mode)', () => {
    for (const url of [
      'postgresql://postgres@127.0.0.1:5432/lq',
      'postgres://u:p@db/x?sslmode=require',
      'postgresql:///lq?host=/var/run/postgresql',
    ])
      assert.deepEqual(splitDatabaseUrl(url), { urls: [url], findPrimary: false });
  });

  it('configuration accepts a host list and refuses what the service cannot honour, naming DATABASE_URL', () => {
    assert.equal(
      loadConfig({ DATABASE_URL: 'postgres://a:1,b:2/db?target_session_attrs=read-write' }).databaseUrl,
      'postgres://a:1,b:2/db?target_session_attrs=read-write',
    );
    assert.throws(
      () => loadConfig({ DATABASE_URL: 'postgres://a:1,b:2/db?target_session_attrs=standby' }),
      (err: Error) => err instanceof ConfigError && /DATABASE_URL: target_session_attrs=standby/.test(err.message),
    );
    assert.throws(
      () => loadConfig({ DATABASE_URL: 'postgres://a:1,:2/db' }),
      (err: Error) => err instanceof ConfigError && /DATABASE_URL/.test(err.message),
    );
  });
});

describe('db: finding the primary', () => {
  const locators: PrimaryLocator[] = [];
  after(async () => {
    for (const l of locators) await l.close();
  });

  function locator(urls: string[]): PrimaryLocator {
    const l = new PrimaryLocator({ urls, checkTimeoutMs: 2000, registry: new Registry(), logger });
    locators.push(l);
    return l;
  }

  it('skips a host that is down and takes the one that accepts writes', async () => {
    const down = `postgresql://postgres@127.0.0.1:${await freePort()}/postgres`;
    const l = locator([down, ADMIN_URL]);
    assert.equal(await l.start(), ADMIN_URL);
    assert.equal(l.url, ADMIN_URL);
    const pool: pg.Pool = new FailoverPool(l, (url) => createPgPool({ url, poolSize: 2, connectTimeoutMs: 2000, logger }, 'logquery-test'));
    try {
      const { rows } = await pool.query<{ ok: number }>('SELECT 1 AS ok');
      assert.deepEqual(rows, [{ ok: 1 }]);
      const client = await pool.connect();
      client.release();
    } finally {
      await pool.end();
    }
  });

  it('with no host taking writes, start fails naming each host and why: a 503, not a hang', async () => {
    const port = await freePort();
    const l = locator([`postgresql://postgres@127.0.0.1:${port}/postgres`]);
    const started = Date.now();
    await assert.rejects(l.start(), (err: Error) => {
      assert.ok(err instanceof NoPrimaryError);
      assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
      assert.ok(isDatabaseUnavailable(err), 'answered as 503');
      return true;
    });
    assert.ok(Date.now() - started < 5000);
  });
});

/**
 * A switchover without an engine: two databases of the shared cluster stand for two hosts, and
 * `default_transaction_read_only` on one makes it answer as a standby does (a new session there
 * is read-only), which is what the locator looks at.
 */
describe('db: following the primary when it moves', () => {
  it('moves the pool and the admin (knex) connections to the host that takes writes, refuses at once while none does, and counts the moves', async () => {
    const a = await createEmptyDatabase('lq_primary_a');
    const b = await createEmptyDatabase('lq_primary_b');
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    const registry = new Registry();
    const locator = new PrimaryLocator({ urls: [a.url, b.url], checkTimeoutMs: 2000, registry, logger });
    const readOnly = (db: { name: string }, on: boolean) =>
      admin.query(`ALTER DATABASE "${db.name}" SET default_transaction_read_only = ${on ? 'on' : 'off'}`);
    const where = async () => (await db.pool.query<{ db: string }>('SELECT current_database() AS db')).rows[0].db;
    const whereAdmin = async () => (await db.knex.raw<{ rows: Array<{ db: string }> }>('SELECT current_database() AS db')).rows[0].db;
    const metric = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]?.value;
    const db = await openDatabase({ url: await locator.start(), poolSize: 2, connectTimeoutMs: 2000, logger, primary: locator });
    try {
      assert.equal(await where(), a.name);
      assert.equal(await whereAdmin(), a.name);

      // A server-wide (here: database-wide) weaker setting does not apply to the service's sessions.
      await admin.query(`ALTER DATABASE "${b.name}" SET synchronous_commit = local`);
      await readOnly(a, true); // a is "demoted": the next check (within a second) moves on to b
      assert.ok(await eventually(async () => (await where()) === b.name, 5000), 'the pool follows the primary');
      assert.equal(await whereAdmin(), b.name, 'knex asks for the primary again');
      assert.equal(await metric('logquery_primary_changes_total'), 1);
      const { rows } = await db.pool.query<{ sync: string }>("SELECT current_setting('synchronous_commit') AS sync");
      assert.equal(rows[0].sync, 'on', 'HA sessions commit synchronously whatever the server says');

      await readOnly(b, true); // no host takes writes: the failover window
      assert.ok(await eventually(async () => !locator.hasPrimary, 5000));
      const started = Date.now();
      await assert.rejects(db.pool.query('SELECT 1'), (err: Error) => err instanceof NoPrimaryError && isDatabaseUnavailable(err));
      await assert.rejects(db.pool.connect(), NoPrimaryError);
      assert.ok(Date.now() - started < 500, 'refused at once, not after a connect timeout');
      assert.equal(await metric('logquery_primary_available'), 0);

      await readOnly(a, false); // a is promoted back
      assert.ok(await eventually(async () => locator.hasPrimary, 5000));
      assert.equal(await where(), a.name);
      assert.equal(await metric('logquery_primary_changes_total'), 2);
      assert.ok((await metric('logquery_primary_unavailable_seconds_total')) > 0, 'the time without a primary is counted');
    } finally {
      await db.close();
      await locator.close();
      await readOnly(a, false);
      await readOnly(b, false);
      await admin.end();
    }
  });
});
