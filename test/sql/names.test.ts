import assert from 'node:assert/strict';
import { SqlLimitError, SqlNameError } from '../../src/sql/index.js';
import { LOGS_ALL_SQL } from '../../seeds/queries.js';
import { insertEvents } from '../support/db.js';
import { expectTranslation, runTranslation } from '../support/translation.js';

const P = 'sqltest-names';

describe('names', () => {
  before(async () => {
    await insertEvents('deno-relay-logs', [{ project: P, event_message: 'n', metadata: { project_ref: P, request: { method: 'PUT' } } }]);
    // A top-level field beside the fixed columns (`body`), and a leaf that only `metadata` has.
    await insertEvents('etl_replication.logs.prod', [
      { project: P, event_message: 'a', stage: 'copy', metadata: { pipeline_id: 42 } },
      { project: P, event_message: 'b', stage: 'apply', metadata: { pipeline_id: 43 } },
    ]);
  });

  it('when columns are unaliased, then BigQuery implicit names: last path part, else f0_, f1_', async () => {
    const t = await expectTranslation(
      `select request.method, 1 + 1, t.event_message, upper('x') from \`deno-relay-logs\` t cross join unnest(t.metadata) m cross join unnest(m.request) as request where t.project = '${P}'`,
    ).toReturn([{ method: 'PUT', f0_: 2, event_message: 'n', f1_: 'X' }]);
    assert.deepStrictEqual(t.columns, [
      { name: 'method', type: 'STRING' },
      { name: 'f0_', type: 'INT64' },
      { name: 'event_message', type: 'STRING' },
      { name: 'f1_', type: 'STRING' },
    ]);
  });

  it('when SELECT * reads a CTE, then its columns in order', async () => {
    await expectTranslation(`with a as (select 1 as x, 'y' as y) select * except (y) from a`).toReturn([{ x: 1 }]);
  });

  it('when a field of a record is unknown, then it reads as NULL and a warning suggests the right one', async () => {
    const t = await expectTranslation(
      `select r.mehtod, r.method from \`deno-relay-logs\` t cross join unnest(t.metadata) m cross join unnest(m.request) r where t.project = '${P}'`,
    ).toReturn([{ mehtod: null, method: 'PUT' }]);
    assert.equal(t.warnings.length, 1);
    assert.match(
      t.warnings[0].message,
      /unknown field mehtod reads as NULL until events bring it; did you mean method\? \(line 1, column 8\)/,
    );
  });

  it('when an unknown field is read through as a record or unnested, then NULL and no rows, not an error', async () => {
    await expectTranslation(
      `select r.not_yet.x_sb_error_code as code, (select count(*) from unnest(r.sb) s) as n from \`deno-relay-logs\` t cross join unnest(t.metadata) m cross join unnest(m.request) r where t.project = '${P}'`,
    ).toReturn([{ code: null, n: 0 }]);
  });

  it('when a top-level field of a source is unknown, then it reads as NULL, qualified or alone in scope', async () => {
    const t = await expectTranslation(
      `select t.identifier, (select max(val) from \`deno-relay-logs\` where project = '${P}') as v from \`deno-relay-logs\` t where t.project = '${P}'`,
    ).toReturn([{ identifier: null, v: null }]);
    assert.deepStrictEqual(
      t.warnings.map((w) => w.message.replace(/;.*| \(.*/, '')),
      [
        'unknown field identifier of deno-relay-logs reads as NULL until events bring it',
        'unknown field val of deno-relay-logs reads as NULL until events bring it',
      ],
    );
  });

  it("when a source is read as `body`, as on the original's Postgres backend, then the whole event is one record", async () => {
    await expectTranslation(
      `select body.event_message as m, body.metadata as meta, t.body.project as p, body.id is not null as has_id from \`deno-relay-logs\` t where t.project = '${P}'`,
    ).toReturn([{ m: 'n', meta: [{ project_ref: P, request: [{ method: 'PUT' }] }], p: P, has_id: true }]);
  });

  it('when a column, table or function is unknown, then a name error with a suggestion', async () => {
    await expectTranslation('select event_mesage from `deno-relay-logs` t, `deno-relay-logs` u').toFail(
      SqlNameError,
      /unknown name event_mesage; did you mean event_message\?/,
    );
    await expectTranslation('with c as (select 1 as x) select c.y from c').toFail(SqlNameError, /unknown column y of c; did you mean x\?/);
    await expectTranslation('with edge_logs as (select 1 as x) select x from edge_log').toFail(
      SqlNameError,
      /unknown table edge_log; did you mean edge_logs\?/,
    );
    await expectTranslation('select regexp_contain("a", "b")').toFail(
      SqlNameError,
      /unknown function regexp_contain; did you mean regexp_contains\?/,
    );
  });

  describe('a name that only the events of the one table in scope could hold', () => {
    const ETL = '`etl_replication.logs.prod`';
    const overCte = (outer: string) => `with c as (select t.id, t.event_message from ${ETL} t where t.project = '${P}') ${outer}`;

    it("when a CTE of one source's events leaves a name out, then it reads NULL with a warning, never the event's value", async () => {
      // `stage` is a field these events have: the CTE's select list, not the event, decides what is shown.
      const t = await expectTranslation(overCte('select event_message, stage from c order by event_message')).toReturn([
        { event_message: 'a', stage: null },
        { event_message: 'b', stage: null },
      ]);
      assert.equal(t.warnings.length, 1);
      assert.match(
        t.warnings[0].message,
        /unknown field stage of c reads as NULL: c does not select it \(its rows are events of etl_replication\.logs\.prod\)/,
      );
      await expectTranslation(overCte("select c.event_message from c where c.stage = 'apply'")).toReturn([]);
    });

    it('when the events keep the name below the top level, then the warning points at the nested field', async () => {
      const t = await expectTranslation(overCte('select event_message from c where pipeline_id = 42')).toReturn([]);
      assert.equal(t.warnings.length, 1);
      assert.match(t.warnings[0].message, /unknown field pipeline_id of c .*; etl_replication\.logs\.prod has metadata\.pipeline_id/);
      const typo = await expectTranslation(overCte('select event_mesage as m from c where false')).toReturn([]);
      assert.match(typo.warnings[0].message, /did you mean event_message\?/);
    });

    it("when Studio filters a logs.all CTE by a bare name, then it runs as on the original's Postgres backend", async () => {
      const { rows, translation } = await runTranslation(LOGS_ALL_SQL, {
        params: { project: P },
        sandboxSql: 'select id, etl_replication_logs.timestamp, event_message from etl_replication_logs where (pipeline_id = 42)',
      });
      assert.deepStrictEqual(rows, []);
      assert.match(translation.warnings[0]?.message ?? '', /unknown field pipeline_id of etl_replication_logs reads as NULL/);
      // Unnested as the hint says, the leaf is there.
      const unnested = await runTranslation(LOGS_ALL_SQL, {
        params: { project: P },
        sandboxSql: 'select event_message from etl_replication_logs cross join unnest(metadata) as m where m.pipeline_id = 42',
      });
      assert.deepStrictEqual(unnested.rows, [{ event_message: 'a' }]);
    });

    it('when a chain of CTEs, a derived table or a CTE read twice holds the events, then the name reads NULL the same way', async () => {
      await expectTranslation(overCte('select stage from (select id from c) d where d.id is not null')).toReturn([
        { stage: null },
        { stage: null },
      ]);
      await expectTranslation(
        `with c as (select t.id, t.event_message from ${ETL} t cross join unnest(t.metadata) as m where t.project = '${P}'), d as (select id from c where stage is null) select count(*) as n, (select count(*) from c where stage is null) as m from d`,
      ).toReturn([{ n: 2, m: 2 }]);
    });

    it("when the name is one of Postgres' own (session_user), then it is still a field, never the database's", async () => {
      const { rows, translation } = await runTranslation(LOGS_ALL_SQL, {
        params: { project: P },
        sandboxSql: 'select session_user as u from etl_replication_logs',
      });
      assert.deepStrictEqual(rows, [{ u: null }, { u: null }]);
      assert.doesNotMatch(translation.sql.replace(/'[^']*'/g, "''"), /session_user/);
    });

    it('when a name is longer than BigQuery allows a column name, then a limit error, not a field', async () => {
      await expectTranslation(overCte(`select ${'a'.repeat(301)} from c`)).toFail(SqlLimitError, /at most 300 characters/);
      await expectTranslation(overCte(`select ${'a'.repeat(300)} from c`)).toReturn([
        { ['a'.repeat(300)]: null },
        { ['a'.repeat(300)]: null },
      ]);
    });

    it('when the rows are not events of one source, then the name is still an error', async () => {
      await expectTranslation(
        `with c as (select event_message, count(*) as n from ${ETL} t group by event_message) select stage from c`,
      ).toFail(SqlNameError, /unknown name stage/);
      await expectTranslation(`with c as (select distinct t.event_message from ${ETL} t) select stage from c`).toFail(
        SqlNameError,
        /unknown name stage/,
      );
      await expectTranslation(
        `with c as (select t.id from ${ETL} t), d as (select t.id from \`deno-relay-logs\` t) select stage from c join d using (id)`,
      ).toFail(SqlNameError, /unknown name stage.*qualify it \(c\.stage or d\.stage\)/);
      await expectTranslation(`with c as (select t.id from ${ETL} t union all select t.id from ${ETL} t) select stage from c`).toFail(
        SqlNameError,
        /unknown name stage/,
      );
      await expectTranslation('with c as (select 1 as x) select c.y from c').toFail(SqlNameError, /unknown column y of c/);
    });
  });
});
