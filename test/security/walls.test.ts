/**
 * Each sandbox wall on its own (SECURITY.md, "The sandbox: three walls"):
 *   wall 1 — the resolver: translateQuery with sandboxSql rejects the whole forbidden corpus;
 *   wall 2 — validatePostgres rejects hand-written Postgres that reaches forbidden things;
 *   wall 3 — executeReadOnly (reader role, READ ONLY, statement_timeout) stops forbidden
 *            statements that reach the database directly, and the role's privileges are minimal.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import pg from 'pg';
import { executeReadOnly, type ExecuteOptions } from '../../src/query/execute.js';
import { READER_ROLE } from '../../src/db/readOnlySession.js';
import { SqlError, SqlSandboxError, initTranslator, translateQuery, validatePostgres } from '../../src/sql/index.js';
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../../seeds/queries.js';
import { testDatabase } from '../support/db.js';
import { sampleSources } from '../support/translation.js';
import { FORBIDDEN_SQL, LITERAL_ROUND_TRIPS, POSTGRES_SQL, RESOURCE_SQL, USAGE_SQL, label } from './corpus.js';

const sources = sampleSources();
const DECLARED = { 'logs.all': ['project', 'iso_timestamp_start', 'iso_timestamp_end'], 'usage.api-counts': ['interval', 'project'] };

/** Wall 1 alone: the SqlError, or (for `@names`) the undeclared parameter the service refuses. */
function wall1(endpointSql: string, declared: readonly string[], sandboxSql: string): void {
  // The bound is on the CPU the translation takes, not wall time: a loaded machine stretches the
  // latter for every input alike, while a hostile input that makes the translator work too hard
  // shows in the former however idle or busy the machine is.
  const started = process.cpuUsage();
  let undeclared: string | undefined;
  try {
    const t = translateQuery({ query: endpointSql, sources, sandboxSql, maxRows: 1000 });
    undeclared = t.parameters.find((p) => !declared.includes(p));
  } catch (e) {
    if (!(e instanceof SqlError)) throw new Error(`not an SqlError: ${(e as Error)?.constructor?.name}: ${(e as Error)?.message}`);
    undeclared = 'rejected';
  }
  const cpu = process.cpuUsage(started);
  assert.ok(cpu.user + cpu.system < 1_000_000, `took ${Math.round((cpu.user + cpu.system) / 1000)} ms of CPU, more than 1 s`);
  assert.ok(undeclared, 'accepted by wall 1');
}

describe('security walls, each on its own', function () {
  this.timeout(20_000);
  before(() => initTranslator());

  describe('wall 1: translateQuery with sandboxSql rejects the forbidden corpus (SqlError)', () => {
    for (const [technique, list] of Object.entries(FORBIDDEN_SQL)) {
      it(`${technique}: all ${list.length} rejected`, () => {
        for (const sql of list) {
          try {
            wall1(LOGS_ALL_SQL, DECLARED['logs.all'], sql);
          } catch (e) {
            assert.fail(`${label(sql)}: ${(e as Error).message}`);
          }
        }
      });
    }

    it(`usage.api-counts: all ${USAGE_SQL.length} rejected`, () => {
      for (const sql of USAGE_SQL) wall1(USAGE_API_COUNTS_SQL, DECLARED['usage.api-counts'], sql);
    });

    it('when a caller reads a source by name, then the error says only CTEs may be read', () => {
      assert.throws(
        () => translateQuery({ query: LOGS_ALL_SQL, sources, sandboxSql: 'select * from `cloudflare.logs.prod`' }),
        SqlSandboxError,
      );
      assert.throws(
        () => translateQuery({ query: LOGS_ALL_SQL, sources, sandboxSql: 'select * from api_keys' }),
        /only read the endpoint's CTEs/,
      );
    });

    it('when resource-heavy or literal-trick SQL is accepted, then its printed SQL reads only CTEs', () => {
      const accepted = [...Object.values(RESOURCE_SQL).flat(), ...LITERAL_ROUND_TRIPS.map((r) => r.sql)];
      for (const sql of accepted) {
        const t = translateQuery({ query: LOGS_ALL_SQL, sources, sandboxSql: sql, maxRows: 1000 });
        // The caller's part follows the endpoint's nine CTEs and names no schema.
        const tail = t.sql.slice(t.sql.lastIndexOf('ORDER BY "t8"."timestamp" DESC)')).replace(/'(?:[^']|'')*'/g, "''");
        assert.doesNotMatch(tail, /"logs"\.|api_keys|pg_/, label(sql));
        assert.match(t.sql, /\nLIMIT (\d+|least\()[^\n]*(\nOFFSET [^\n]*)?$/, `${label(sql)} is not capped`);
      }
    });
  });

  describe('wall 2: validatePostgres rejects hand-written Postgres', () => {
    for (const [technique, list] of Object.entries(POSTGRES_SQL)) {
      describe(technique, () => {
        for (const sql of list) {
          it(label(sql), () => assert.throws(() => validatePostgres(sql), SqlSandboxError));
        }
      });
    }

    it('when the SQL is of the printer’s shape, with quoting tricks inside constants, then it passes', () => {
      for (const sql of [
        'WITH x AS (SELECT 1 AS "a") SELECT "q"."a" FROM (SELECT * FROM "x") AS "q"',
        'SELECT "t0"."id" FROM "logs"."cloudflare_logs_prod" AS "t0" WHERE ("t0"."project" = $1::text) LIMIT 1000',
        'SELECT $$; DROP TABLE api_keys; $$ AS "a", E\'\\x27\' AS "b", U&\'\\0041\' AS "c", \'--\' AS "d"',
        "SELECT lower('a'), pg_catalog.upper('b')",
      ]) {
        assert.doesNotThrow(() => validatePostgres(sql), sql);
      }
    });

    it('when every translated seeded query is validated again, then it passes', () => {
      for (const query of [LOGS_ALL_SQL, USAGE_API_COUNTS_SQL]) validatePostgres(translateQuery({ query, sources, maxRows: 1000 }).sql);
    });
  });

  describe('wall 3: executeReadOnly on the test database', () => {
    let pool: pg.Pool;
    let url: string;
    const options: ExecuteOptions = { timeoutMs: 500, useReaderRole: true };
    const fails = async (sql: string, code: string, message?: RegExp, p?: pg.Pool) => {
      await assert.rejects(executeReadOnly(p ?? pool, sql, [], options), (e: { code?: string; message?: string }) => {
        assert.equal(e.code, code, `${sql}: ${e.message}`);
        if (message) assert.match(e.message ?? '', message);
        return true;
      });
    };

    before(async () => {
      ({ pool, url } = await testDatabase());
    });

    it('when the query reads a log table, then it runs as the reader role', async () => {
      const run = await executeReadOnly(pool, 'SELECT current_user, count(*) FROM logs.cloudflare_logs_prod', [], options);
      assert.equal(run.rows[0][0], READER_ROLE);
    });

    for (const table of ['api_keys', 'public.api_keys', 'endpoints', 'sources', 'pgmigrations']) {
      it(`when it reads ${table}, then permission denied (42501)`, () => fails(`SELECT * FROM ${table}`, '42501', /permission denied/));
    }

    for (const sql of [
      'INSERT INTO logs.cloudflare_logs_prod (id, "timestamp", event_message) VALUES (gen_random_uuid(), now(), \'x\')',
      "UPDATE logs.cloudflare_logs_prod SET event_message = 'x'",
      'DELETE FROM logs.cloudflare_logs_prod',
      'CREATE TABLE logs.sec_probe (a int)',
      'WITH d AS (DELETE FROM logs.cloudflare_logs_prod RETURNING 1) SELECT count(*) FROM d',
      'SELECT * FROM logs.cloudflare_logs_prod FOR UPDATE',
    ]) {
      it(`when it writes (${label(sql, 50)}), then the read-only transaction refuses (25006)`, () =>
        fails(sql, '25006', /read-only transaction/));
    }

    for (const sql of [
      "SELECT pg_read_file('/etc/passwd')",
      "SELECT pg_ls_dir('.')",
      "SELECT lo_import('/etc/passwd')",
      "SELECT pg_stat_file('/etc/passwd')",
      'SELECT pg_reload_conf()',
      "SELECT nextval('pgmigrations_id_seq')",
    ]) {
      it(`when it calls ${label(sql, 50)}, then permission denied (42501)`, () => fails(sql, '42501'));
    }

    it('when it signals a privileged backend, then it is refused', async () => {
      const { rows } = await pool.query('SELECT pg_backend_pid() AS pid');
      await fails(`SELECT pg_terminate_backend(${Number(rows[0].pid)})`, '42501');
      await fails(`SELECT pg_cancel_backend(${Number(rows[0].pid)})`, '42501');
    });

    it('when it sleeps past the timeout, then 57014 cancels it before the sleep ends', async () => {
      // The error's code and text say the statement timeout cancelled it; the sleep, far longer than the
      // 500 ms limit, only has to outlast a loaded machine's delays, not race them.
      const started = Date.now();
      await fails('SELECT pg_sleep(15)', '57014', /statement timeout/);
      assert.ok(Date.now() - started < 15_000, 'cancelled, not slept through');
    });

    it('when the text holds several statements without parameters, then none runs (extended protocol)', async () => {
      // Regression: with no values pg used the simple protocol; statements after COMMIT ran outside
      // the read-only transaction and as the service's own role.
      await fails('SELECT 1; COMMIT; CREATE TABLE public.sec_probe_multi ()', '42601', /multiple commands/);
      await fails('SELECT $1::text; COMMIT; CREATE TABLE public.sec_probe_multi ()', '42601');
      const { rows } = await pool.query("SELECT to_regclass('public.sec_probe_multi') AS t");
      assert.equal(rows[0].t, null);
    });

    it('when the result is larger than the byte cap, then 400 resultTooLarge, the connection is dropped and the pool still works', async () => {
      const before = process.memoryUsage().rss;
      await assert.rejects(
        executeReadOnly(pool, "SELECT repeat('a', 50000000)", [], { ...options, timeoutMs: 10_000, maxResultBytes: 1024 * 1024 }),
        (e: { httpStatus?: number; details?: Array<{ reason: string }> }) =>
          e.httpStatus === 400 && e.details?.[0]?.reason === 'resultTooLarge',
      );
      assert.ok(process.memoryUsage().rss - before < 40 * 1024 * 1024, 'the 50 MB row was read into memory');
      const run = await executeReadOnly(pool, 'SELECT 1', [], options);
      assert.deepEqual(run.rows, [['1']]);
    });

    describe('on a database configured with standard_conforming_strings = off', () => {
      let lax: pg.Pool;
      before(() => {
        lax = new pg.Pool({ connectionString: url, options: '-c standard_conforming_strings=off', max: 2 });
      });
      after(() => lax.end());

      it("when a printed literal holds \\', then it stays one literal (no injection)", async () => {
        const run = await executeReadOnly(lax, "SELECT '\\'' , (SELECT count(*) FROM pg_class) --'", [], options);
        assert.equal(run.fields.length, 1);
        assert.equal(run.rows[0][0], "\\' , (SELECT count(*) FROM pg_class) --");
      });

      it('when random strings go through a BigQuery literal, the translator and the database, then each comes back unchanged', async () => {
        const bigQueryLiteral = (s: string) =>
          `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r')}"`;
        const text = fc.string({
          unit: fc.constantFrom("'", '"', '\\', '$', '-', '/', '*', ';', 'E', 'U', '&', '`', ' ', '\n', 'x', 'é', '🦄'),
          maxLength: 30,
        });
        await fc.assert(
          fc.asyncProperty(text, async (s) => {
            for (const p of [pool, lax]) {
              const t = translateQuery({ query: LOGS_ALL_SQL, sources, sandboxSql: `select ${bigQueryLiteral(s)} as v`, maxRows: 1000 });
              const values = t.parameters.map((name) => (name === 'project' ? 'x' : null));
              const run = await executeReadOnly(p, t.sql, values, options);
              assert.deepEqual(run.rows, [[s]]);
            }
          }),
          { numRuns: 60 },
        );
      });
    });

    describe('the reader role, from the catalogs', () => {
      const one = async <T>(sql: string, values: unknown[] = []): Promise<T> => (await pool.query(sql, values)).rows[0] as T;

      it('is not a superuser and cannot create roles or databases, replicate or bypass RLS (it logs in: endpoint queries connect as it)', async () => {
        const r = await one<Record<string, boolean>>(
          'SELECT rolsuper, rolcreaterole, rolcreatedb, rolcanlogin, rolreplication, rolbypassrls, rolinherit FROM pg_roles WHERE rolname = $1',
          [READER_ROLE],
        );
        assert.deepEqual(r, {
          rolsuper: false,
          rolcreaterole: false,
          rolcreatedb: false,
          rolcanlogin: true,
          rolreplication: false,
          rolbypassrls: false,
          rolinherit: false,
        });
      });

      it('is a member of no role (no pg_read_server_files, pg_read_all_data, …) and owns nothing', async () => {
        const { rows } = await pool.query('SELECT roleid::regrole::text AS r FROM pg_auth_members WHERE member = $1::regrole', [
          READER_ROLE,
        ]);
        assert.deepEqual(rows, []);
        const owned = await one<{ n: number }>('SELECT count(*)::int AS n FROM pg_class WHERE relowner = $1::regrole', [READER_ROLE]);
        assert.equal(owned.n, 0);
      });

      it('has SELECT on every table of schema logs and nothing else there', async () => {
        const { rows } = await pool.query(
          `SELECT c.relname,
                  has_table_privilege($1, c.oid, 'SELECT') AS sel,
                  has_table_privilege($1, c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER') AS other
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'logs' AND c.relkind IN ('r', 'p')`,
          [READER_ROLE],
        );
        assert.ok(rows.length >= 9, 'log tables exist');
        for (const r of rows) assert.deepEqual({ t: r.relname, sel: r.sel, other: r.other }, { t: r.relname, sel: true, other: false });
      });

      it('has no privilege on any table, view or sequence outside schema logs (other than the system catalogs)', async () => {
        const { rows } = await pool.query(
          `SELECT n.nspname || '.' || c.relname AS name
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname NOT IN ('logs', 'pg_catalog', 'information_schema', 'pg_toast') AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
             AND has_table_privilege($1, c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
           UNION ALL
           SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE c.relkind = 'S' AND n.nspname <> 'pg_catalog' AND CASE WHEN c.relkind = 'S' THEN has_sequence_privilege($1, c.oid, 'USAGE, SELECT, UPDATE') END`,
          [READER_ROLE],
        );
        assert.deepEqual(rows, []);
        const tables = await one<{ n: number }>("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'");
        assert.ok(tables.n >= 3, 'service tables exist');
      });

      it('cannot create in public or logs, nor temporary tables; may use schema logs', async () => {
        const r = await one<Record<string, boolean>>(
          `SELECT has_schema_privilege($1, 'public', 'CREATE') AS public_create,
                  has_schema_privilege($1, 'logs', 'CREATE') AS logs_create,
                  has_schema_privilege($1, 'logs', 'USAGE') AS logs_usage,
                  has_database_privilege($1, current_database(), 'CREATE') AS db_create,
                  has_database_privilege($1, current_database(), 'TEMPORARY') AS db_temp`,
          [READER_ROLE],
        );
        assert.deepEqual(r, { public_create: false, logs_create: false, logs_usage: true, db_create: false, db_temp: false });
      });

      it('cannot execute the file, large-object or signalling functions', async () => {
        for (const fn of [
          'pg_read_file(text)',
          'pg_read_binary_file(text)',
          'pg_ls_dir(text)',
          'lo_import(text)',
          'lo_export(oid, text)',
          'pg_reload_conf()',
          'pg_rotate_logfile()',
        ]) {
          const r = await one<{ x: boolean }>("SELECT has_function_privilege($1, $2, 'EXECUTE') AS x", [READER_ROLE, fn]);
          assert.equal(r.x, false, fn);
        }
      });
    });
  });
});
