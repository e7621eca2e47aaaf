import assert from 'node:assert/strict';
import { SqlError, SqlNameError, SqlSandboxError, SqlUnsupportedError, initTranslator, validatePostgres } from '../../src/sql/index.js';
import { LOGS_ALL_SQL } from '../../seeds/queries.js';
import { insertEvents } from '../support/db.js';
import { expectTranslation } from '../support/translation.js';

const P = 'sqltest-sandbox';
const ENDPOINT = `with edge_logs as (select t.id, t.timestamp, t.event_message from \`cloudflare.logs.prod\` t where t.project = @project),
  counts as (select count(*) as n from edge_logs)
select * from edge_logs order by timestamp desc limit 100`;

describe('sandboxed sql', () => {
  before(() =>
    insertEvents('cloudflare.logs.prod', [
      { project: P, event_message: 'visible' },
      { project: 'sqltest-sandbox-hidden', event_message: 'hidden' },
    ]),
  );

  describe('wall 1: the resolver', () => {
    it('when the caller reads the endpoint CTEs and defines its own, then it runs', async () => {
      await expectTranslation(ENDPOINT, {
        params: { project: P },
        sandboxSql: 'with mine as (select event_message as m from edge_logs) select m, (select n from counts) as n from mine',
      }).toReturn([{ m: 'visible', n: 1 }]);
    });

    it('when the endpoint has no WITH clause, then SqlSandboxError', async () => {
      await expectTranslation('select 1 as x', { sandboxSql: 'select 1' }).toFail(SqlSandboxError, /no WITH clause/);
    });

    const rejectedTables: [string, string][] = [
      ['a source by name', 'select * from `cloudflare.logs.prod`'],
      ['a log table', 'select * from logs.cloudflare_logs_prod'],
      ['the catalog', 'select * from pg_catalog.pg_class'],
      ['information_schema', 'select * from information_schema.tables'],
      ['a service table', 'select * from api_keys'],
      ['the endpoints table', 'select * from endpoints'],
      ['a source inside a subquery', 'select (select count(*) from `postgres.logs`) as n from edge_logs'],
      ['a source inside the caller CTE', 'with x as (select * from `postgres.logs`) select * from x'],
      ['a quoted trick', 'select * from `edge_logs"; drop table x; --`'],
      ['a comment trick', 'select * from /* edge_logs */ api_keys -- edge_logs'],
    ];
    for (const [what, sql] of rejectedTables) {
      it(`when the caller reads ${what}, then SqlSandboxError with its position`, async () => {
        await expectTranslation(ENDPOINT, { sandboxSql: sql }).toFail(SqlSandboxError, /is not allowed here.*\(line 1, column \d+\)/);
      });
    }

    it('when a caller CTE shadows an endpoint CTE, then SqlSandboxError', async () => {
      await expectTranslation(ENDPOINT, { sandboxSql: 'with edge_logs as (select 1 as x) select * from edge_logs' }).toFail(
        SqlSandboxError,
        /already defined by the endpoint/,
      );
    });

    for (const fn of [
      'pg_sleep(10)',
      "pg_read_file('/etc/passwd')",
      "set_config('role', 'postgres', false)",
      "dblink('x', 'y')",
      "lo_import('/etc/passwd')",
      "query_to_xml('select 1', true, true, '')",
      'generate_series(1, 10)',
    ]) {
      it(`when the caller calls ${fn.split('(')[0]}, then an unknown-function error`, async () => {
        await expectTranslation(ENDPOINT, { sandboxSql: `select ${fn} as x from edge_logs` }).toFail(SqlNameError, /unknown function/);
      });
    }

    it('when the caller sends DML or several statements, then refused', async () => {
      await expectTranslation(ENDPOINT, { sandboxSql: 'delete from edge_logs where true' }).toFail(
        SqlUnsupportedError,
        /DELETE is not supported/,
      );
      await expectTranslation(ENDPOINT, { sandboxSql: 'select 1 as x from edge_logs; drop table endpoints' }).toFail(
        SqlUnsupportedError,
        /only one statement/,
      );
      await expectTranslation(ENDPOINT, { sandboxSql: 'select * from edge_logs for update' }).toFail(SqlUnsupportedError, /FOR/);
    });

    it('when the caller groups and orders by an alias (the README example), then it runs', async () => {
      await expectTranslation(ENDPOINT, {
        params: { project: P },
        sandboxSql: 'select count(*) as n, event_message from edge_logs group by event_message order by n desc limit 5',
      }).toReturn([{ n: 1, event_message: 'visible' }]);
    });

    it('when sandboxed sql is capped by maxRows, then at most that many rows', async () => {
      await expectTranslation(LOGS_ALL_SQL, {
        params: { project: P },
        sandboxSql: 'select event_message from edge_logs union all select event_message from edge_logs',
        maxRows: 1,
      }).toReturn([{ event_message: 'visible' }]);
    });
  });

  describe('wall 2: validate.ts on hand-written Postgres', () => {
    before(() => initTranslator());
    const refused = [
      'SELECT * FROM logs.x; SELECT 1',
      'SELECT * FROM pg_catalog.pg_class',
      'SELECT * FROM pg_class',
      'SELECT * FROM information_schema.tables',
      'SELECT * FROM public.endpoints',
      'SELECT * FROM api_keys',
      'SELECT pg_sleep(10)',
      "SELECT pg_read_file('/etc/passwd')",
      "SELECT set_config('role', 'postgres', false)",
      "SELECT * FROM dblink('x', 'y') AS t(a text)",
      "SELECT lo_import('/etc/passwd')",
      "SELECT query_to_xml('select 1', true, true, '')",
      'SELECT * FROM generate_series(1, 3)',
      'SELECT * INTO evil FROM logs.x',
      'SELECT * FROM logs.x FOR UPDATE',
      'DELETE FROM logs.x',
      'INSERT INTO logs.x SELECT 1',
      'WITH RECURSIVE r AS (SELECT 1 UNION ALL SELECT 1 FROM r) SELECT * FROM r',
      'WITH d AS (DELETE FROM logs.x RETURNING *) SELECT * FROM d',
      'SELECT 1 OPERATOR(pg_catalog.+) 1',
      "SELECT 'pg_class'::regclass",
      'SELECT pg_catalog.pg_sleep(1)',
      'SELECT (SELECT relname FROM pg_class LIMIT 1)',
      'WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a',
      'SET ROLE postgres',
      'SELECT count(*) OVER w FROM logs.x WINDOW w AS ()',
      'SELECT row_number() FROM logs.x',
      'SELECT count(*) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES) FROM logs.x',
      'SELECT pg_sleep(1) OVER () FROM logs.x',
      'SELECT count(*) OVER (ORDER BY pg_sleep(1)) FROM logs.x',
      "SELECT jsonb_build_object('a', (SELECT relname FROM pg_class LIMIT 1))",
      'SELECT * FROM "logs"."x" AS a, "pg_catalog"."pg_class" AS b',
      'SELECT * FROM logs.x /* ; */ ; DROP TABLE logs.x',
      'SELECT $q$pg_authid$q$::regclass',
      'SELECT * FROM logs.x AS a WHERE a.id = (SELECT usename FROM pg_user LIMIT 1)',
      'SELECT a.id FROM logs.x AS a ORDER BY a.id USING ~<~',
      'SELECT current_user',
      'SELECT a.id COLLATE "C" FROM logs.x AS a',
      'SELECT 1 IS DISTINCT FROM 2',
    ];
    for (const sql of refused) {
      it(`when given ${sql}, then SqlSandboxError`, () => {
        assert.throws(
          () => validatePostgres(sql),
          (e: unknown) => e instanceof SqlSandboxError && e instanceof SqlError,
        );
      });
    }

    it('when given SQL of the printer’s shape, then it passes', () => {
      validatePostgres(
        'WITH "a" AS (SELECT "t0"."id" AS "id" FROM "logs"."x" AS "t0" CROSS JOIN LATERAL jsonb_array_elements("t0"."metadata") AS "t1"("value") WHERE ("t0"."project" = $1::text)) SELECT count(*) FILTER (WHERE TRUE) AS "n" FROM "a" AS "t2"',
      );
    });
  });
});
