import assert from 'node:assert/strict';
import { SqlNameError } from '../../src/sql/index.js';
import { insertEvents } from '../support/db.js';
import { expectTranslation } from '../support/translation.js';

const P = 'sqltest-names';

describe('names', () => {
  before(() =>
    insertEvents('deno-relay-logs', [{ project: P, event_message: 'n', metadata: { project_ref: P, request: { method: 'PUT' } } }]),
  );

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
});
