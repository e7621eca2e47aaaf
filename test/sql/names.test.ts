import assert from 'node:assert/strict';
import { SqlNameError } from '../../src/sql/index.js';
import { insertEvents } from '../support/db.js';
import { expectTranslation } from '../support/translation.js';

const P = 'sqltest-names';

describe('names', () => {
  before(() => insertEvents('deno-relay-logs', [{ project: P, event_message: 'n', metadata: { project_ref: P, request: { method: 'PUT' } } }]));

  it('when columns are unaliased, then BigQuery implicit names: last path part, else f0_, f1_', async () => {
    const t = await expectTranslation(`select request.method, 1 + 1, t.event_message, upper('x') from \`deno-relay-logs\` t cross join unnest(t.metadata) m cross join unnest(m.request) as request where t.project = '${P}'`)
      .toReturn([{ method: 'PUT', f0_: 2, event_message: 'n', f1_: 'X' }]);
    assert.deepStrictEqual(t.columns, [{ name: 'method', type: 'STRING' }, { name: 'f0_', type: 'INT64' }, { name: 'event_message', type: 'STRING' }, { name: 'f1_', type: 'STRING' }]);
  });

  it('when SELECT * reads a CTE, then its columns in order', async () => {
    await expectTranslation(`with a as (select 1 as x, 'y' as y) select * except (y) from a`).toReturn([{ x: 1 }]);
  });

  it('when a field is misspelt, then an unknown-field error suggests the right one', async () => {
    await expectTranslation(`select r.mehtod from \`deno-relay-logs\` t cross join unnest(t.metadata) m cross join unnest(m.request) r`)
      .toFail(SqlNameError, /unknown field mehtod; did you mean method\?/);
  });

  it('when a column, table or function is unknown, then a name error with a suggestion', async () => {
    await expectTranslation('select event_mesage from `deno-relay-logs`').toFail(SqlNameError, /unknown name event_mesage; did you mean event_message\?/);
    await expectTranslation('with edge_logs as (select 1 as x) select x from edge_log').toFail(SqlNameError, /unknown table edge_log; did you mean edge_logs\?/);
    await expectTranslation('select regexp_contain("a", "b")').toFail(SqlNameError, /unknown function regexp_contain; did you mean regexp_contains\?/);
  });
});
