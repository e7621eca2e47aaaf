/**
 * Wall 3 as one round trip (src/query/execute.ts, src/db/pipelined.ts): BEGIN READ ONLY, the
 * settings, the query and ROLLBACK go out as one pipelined batch. On the reader's own connections
 * the settings come from the session's startup options (src/db/readerPool.ts), so these tests
 * check that such a session really is read-only and bounded, that a query cannot change it for
 * the next one (the ROLLBACK undoes `set_config(…, false)`), that timeouts still cancel, and that
 * the embedded PGlite keeps the three round trips and still works.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import request from 'supertest';
import { loadConfig } from '../../src/config.js';
import { createApp } from '../../src/app.js';
import { createContext, type AppContext } from '../../src/context.js';
import { generateKey } from '../../src/auth/keys.js';
import { createLogger } from '../../src/logger.js';
import { openReaderPool } from '../../src/db/readerPool.js';
import { executeReadOnly, type ExecuteOptions } from '../../src/query/execute.js';
import { READER_ROLE } from '../../src/db/readOnlySession.js';
import { testDatabase } from '../support/db.js';

const SETTINGS =
  "SELECT current_user, current_setting('transaction_read_only'), current_setting('statement_timeout'), current_setting('TimeZone'), current_setting('jit'), current_setting('standard_conforming_strings')";
/** Session-level changes of everything wall 3 relies on (is_local = false: they would outlive a commit). */
const TAMPER = [
  "set_config('statement_timeout', '0', false)",
  "set_config('default_transaction_read_only', 'off', false)",
  "set_config('TimeZone', 'America/New_York', false)",
  "set_config('jit', 'on', false)",
  "set_config('standard_conforming_strings', 'off', false)",
  "set_config('role', 'none', false)",
].join(', ');

describe('wall 3 in one round trip (pipelined read-only transaction)', function () {
  this.timeout(60_000);
  let context: AppContext;
  const pools: pg.Pool[] = [];

  /** A reader pool of one connection (so every query reuses it) whose sessions start with this statement_timeout. */
  const readerPool = async (statementTimeoutMs: number): Promise<pg.Pool> => {
    const opened = await openReaderPool(context.db, {
      poolSize: 1,
      connectTimeoutMs: 5_000,
      logger: createLogger('silent'),
      statementTimeoutMs,
    });
    assert.ok(!('unavailable' in opened), 'the reader can log in');
    pools.push(opened);
    return opened;
  };
  /** The fallback: the service's own login, one connection, SET LOCAL ROLE per query. */
  const servicePool = (): pg.Pool => {
    const pool = new pg.Pool({ connectionString: context.db.url, max: 1 });
    pools.push(pool);
    return pool;
  };
  const reader = (timeoutMs: number): ExecuteOptions => ({ timeoutMs, useReaderRole: false });
  const fallback = (timeoutMs: number): ExecuteOptions => ({ timeoutMs, useReaderRole: true });
  const code = (expected: string) => (e: { code?: string; message?: string }) => {
    assert.equal(e.code, expected, e.message);
    return true;
  };
  /** Round trips of one executeReadOnly on a one-connection pool: ReadyForQuery messages it caused. */
  const roundTrips = async (pool: pg.Pool, run: () => Promise<unknown>): Promise<number> => {
    const client = await pool.connect();
    let n = 0;
    const connection = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
    const onReady = () => n++;
    connection.on('readyForQuery', onReady);
    client.release();
    try {
      await run();
    } finally {
      connection.removeListener('readyForQuery', onReady);
    }
    return n;
  };

  before(async () => {
    ({ context } = await testDatabase());
  });
  after(async () => {
    await Promise.all(pools.map((p) => p.end()));
  });

  it('when a query runs on a reader connection, then it is one round trip, in a read-only transaction, with the settings of wall 3', async () => {
    const pool = await readerPool(1_500);
    let run!: Awaited<ReturnType<typeof executeReadOnly>>;
    assert.equal(await roundTrips(pool, async () => (run = await executeReadOnly(pool, SETTINGS, [], reader(1_500)))), 1);
    assert.deepEqual(run.rows, [[READER_ROLE, 'on', '1500ms', 'UTC', 'off', 'on']]);
    // A limit other than the session's is set for this query only.
    assert.deepEqual((await executeReadOnly(pool, SETTINGS, [], reader(700))).rows, [[READER_ROLE, 'on', '700ms', 'UTC', 'off', 'on']]);
    assert.deepEqual((await executeReadOnly(pool, SETTINGS, [], reader(1_500))).rows, [[READER_ROLE, 'on', '1500ms', 'UTC', 'off', 'on']]);
  });

  it('when a query runs on the fallback (SET LOCAL ROLE on the service login), then it is one round trip with the same settings', async () => {
    const pool = servicePool();
    let run!: Awaited<ReturnType<typeof executeReadOnly>>;
    assert.equal(await roundTrips(pool, async () => (run = await executeReadOnly(pool, SETTINGS, [], fallback(800)))), 1);
    assert.deepEqual(run.rows, [[READER_ROLE, 'on', '800ms', 'UTC', 'off', 'on']]);
    // After the batch the connection is the service's again (the role was local to the rolled back transaction).
    assert.notEqual((await pool.query('SELECT current_user AS u')).rows[0].u, READER_ROLE);
    // The three round trips of before, still available (the embedded PGlite uses them).
    assert.equal(await roundTrips(pool, () => executeReadOnly(pool, SETTINGS, [], { ...fallback(800), pipelined: false })), 3);
  });

  it('when a reader connection is used outside a transaction, then its session is still read-only and bounded by its timeout', async () => {
    const pool = await readerPool(400);
    const { rows } = await pool.query(
      "SELECT current_user AS u, current_setting('default_transaction_read_only') AS ro, current_setting('statement_timeout') AS t",
    );
    assert.deepEqual(rows, [{ u: READER_ROLE, ro: 'on', t: '400ms' }]);
    await assert.rejects(pool.query('CREATE TEMP TABLE probe_write (a int)'), code('25006'));
    await assert.rejects(pool.query('DELETE FROM logs.cloudflare_logs_prod'), code('25006'));
    await assert.rejects(pool.query('SELECT pg_sleep(5)'), code('57014'));
  });

  for (const [label, make, options] of [
    ['reader login', () => readerPool(1_000), reader(1_000)],
    ['fallback', async () => servicePool(), fallback(1_000)],
  ] as const) {
    describe(`${label}: what a query changes in its session does not reach the next query`, () => {
      let pool: pg.Pool;
      before(async () => {
        pool = await make();
      });
      const intact = async () =>
        assert.deepEqual((await executeReadOnly(pool, SETTINGS, [], options)).rows, [[READER_ROLE, 'on', '1s', 'UTC', 'off', 'on']]);

      it('when a query resets timeout, read-only, time zone, jit, standard_conforming_strings and role for the session, then the next query has them as before', async () => {
        await executeReadOnly(pool, `SELECT ${TAMPER}`, [], options);
        await intact();
      });

      it('when such a query then fails, then the next query has them as before', async () => {
        await assert.rejects(
          executeReadOnly(pool, `SELECT ${TAMPER}, 1 / (length(current_setting('jit')) - 2)`, [], options),
          code('22012'),
        );
        await intact();
      });

      it('when the query text is COMMIT, then it ends only its own empty transaction and the next query is read-only again', async () => {
        await executeReadOnly(pool, 'COMMIT', [], options);
        await intact();
      });

      it('when the query is several statements, then none runs (42601) and the connection is fine after', async () => {
        await assert.rejects(executeReadOnly(pool, `SELECT 1; SELECT ${TAMPER}`, [], options), code('42601'));
        await intact();
      });

      it('when it makes its own transaction read-write, then it is refused (25001)', async () => {
        await assert.rejects(executeReadOnly(pool, "SELECT set_config('transaction_read_only', 'off', true)", [], options), code('25001'));
        await intact();
      });

      it('when it writes, then the read-only transaction refuses (25006) and the connection is idle after', async () => {
        await assert.rejects(executeReadOnly(pool, 'DELETE FROM logs.cloudflare_logs_prod', [], options), code('25006'));
        await assert.rejects(executeReadOnly(pool, 'CREATE TEMP TABLE probe_write (a int)', [], options), code('25006'));
        const client = await pool.connect();
        try {
          assert.equal(client.getTransactionStatus(), 'I');
        } finally {
          client.release();
        }
        await intact();
      });
    });
  }

  describe('timeouts still cancel', () => {
    it("when a query on a reader connection runs past the session's limit, then 57014 cancels it and the connection is reused", async () => {
      const pool = await readerPool(300);
      // 57014 says the statement timeout cancelled it; a sleep far past the limit outlasts a loaded machine's delays.
      const started = Date.now();
      await assert.rejects(executeReadOnly(pool, 'SELECT pg_sleep(15)', [], reader(300)), code('57014'));
      assert.ok(Date.now() - started < 15_000, `cancelled, not slept through: took ${Date.now() - started} ms`);
      assert.deepEqual((await executeReadOnly(pool, 'SELECT 1', [], reader(300))).rows, [['1']]);
      assert.equal(pool.totalCount, 1);
    });

    it("when a query's limit is shorter than the session's, then its own limit cancels it", async () => {
      const pool = await readerPool(10_000);
      const started = Date.now();
      await assert.rejects(executeReadOnly(pool, 'SELECT pg_sleep(15)', [], reader(300)), code('57014'));
      assert.ok(Date.now() - started < 10_000, `cancelled by its own limit, before the session's 10 s: took ${Date.now() - started} ms`);
    });

    it("when a query's limit is longer than the session's, then it may use it", async () => {
      const pool = await readerPool(200);
      assert.deepEqual((await executeReadOnly(pool, 'SELECT pg_sleep(0.5)::text', [], reader(3_000))).rows, [['']]);
      await assert.rejects(executeReadOnly(pool, 'SELECT pg_sleep(0.5)', [], reader(200)), code('57014'));
    });

    it('when a query on the fallback sleeps past its limit, then 57014 cancels it', async () => {
      const pool = servicePool();
      const started = Date.now();
      await assert.rejects(executeReadOnly(pool, 'SELECT pg_sleep(15)', [], fallback(300)), code('57014'));
      assert.ok(Date.now() - started < 15_000, `cancelled, not slept through: took ${Date.now() - started} ms`);
    });
  });

  it('when values and rows go through the batch, then they arrive as text, NULLs as null, with their column types', async () => {
    const run = await executeReadOnly(
      context.reader!,
      'SELECT $1::text AS a, $2::int8 AS b, NULL::jsonb AS c, $3::text AS d',
      ['x', '9007199254740993', null],
      reader(context.config.queryTimeoutMs),
    );
    assert.deepEqual(run.rows, [['x', '9007199254740993', null, null]]);
    assert.deepEqual(
      run.fields.map((f) => [f.name, f.dataTypeID]),
      [
        ['a', 25],
        ['b', 20],
        ['c', 3802],
        ['d', 25],
      ],
    );
  });
});

describe('the embedded PGlite: endpoint queries keep the three round trips', function () {
  this.timeout(90_000);
  let dataDir: string;
  let ctx: AppContext | undefined;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'logquery-exec-embedded-'));
    ctx = await createContext(loadConfig({ DATA_DIR: dataDir, LOAD_DEMO_DATA: 'false', LOG_LEVEL: 'silent' }), createLogger('silent'));
  });
  after(async () => {
    await ctx?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('when an endpoint runs on the embedded database, then it answers, as the reader role, read-only', async () => {
    assert.equal(ctx!.reader, undefined);
    const app = await createApp(ctx!);
    const key = generateKey();
    await ctx!.keys.create('exec-embedded', key, ['query']);
    const res = await request(app)
      .get('/api/endpoints/query/logs.all')
      .query({ project: 'p', sql: 'select count(*) as n from edge_logs' })
      .set('X-API-KEY', key);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { result: [{ n: 0 }] });
    const options: ExecuteOptions = { timeoutMs: 1_000, useReaderRole: true, pipelined: false };
    assert.deepEqual(
      (await executeReadOnly(ctx!.db.pool, "SELECT current_user, current_setting('transaction_read_only')", [], options)).rows,
      [[READER_ROLE, 'on']],
    );
    await assert.rejects(
      executeReadOnly(ctx!.db.pool, 'SELECT * FROM api_keys', [], options),
      (e: { code?: string }) => e.code === '42501',
    );
  });
});
