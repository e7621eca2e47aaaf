/**
 * Top-level CTEs that nothing reads are left out of the printed SQL and the parameters are
 * renumbered (src/sql/postgres/unusedCtes.ts); the rows must not change.
 */
import assert from 'node:assert/strict';
import { insertEvents } from '../support/db.js';
import { expectTranslation } from '../support/translation.js';
import { LOGS_ALL_SQL } from '../../seeds/queries.js';

const P = 'sqltest-unused-ctes';
const ENDPOINT = `with a as (select event_message from \`pgbouncer.logs.prod\` where project = @first),
  b as (select event_message from \`pgbouncer.logs.prod\` where project = @second),
  c as (select event_message from a where event_message != @skip)
select event_message from b`;

describe('unread CTEs', () => {
  before(() =>
    insertEvents('pgbouncer.logs.prod', [
      { project: P, event_message: 'one' },
      { project: `${P}-2`, event_message: 'two' },
    ]),
  );

  it('when the query reads one CTE, then only it is printed and its parameter becomes $1', async () => {
    const t = await expectTranslation(ENDPOINT, { params: { first: P, second: `${P}-2`, skip: 'x' } }).toReturn([{ event_message: 'two' }]);
    assert.deepEqual(t.parameters, ['second']);
    assert.doesNotMatch(t.sql, /"a" AS|"c" AS/);
    assert.match(t.sql, /"project" = \$1::text/);
  });

  it('when a read CTE reads another, then both stay, in order, with their parameters', async () => {
    const t = await expectTranslation(ENDPOINT, {
      params: { first: P, second: `${P}-2`, skip: 'x' },
      sandboxSql: 'select event_message from c',
    }).toReturn([{ event_message: 'one' }]);
    assert.deepEqual(t.parameters, ['first', 'skip']);
    assert.match(t.sql, /^WITH "a" AS [^]*"c" AS/);
    assert.doesNotMatch(t.sql, /"b" AS/);
  });

  it('when a sandboxed query reads one CTE of logs.all, then the eight others are not printed', async () => {
    await insertEvents('postgres.logs', [{ project: P, event_message: 'pg line' }]);
    const t = await expectTranslation(LOGS_ALL_SQL, {
      params: { project: P, iso_timestamp_start: '', iso_timestamp_end: '' },
      sandboxSql: 'select event_message from postgres_logs',
    }).toReturn([{ event_message: 'pg line' }]);
    assert.equal(t.sql.match(/^"?[a-z_]+"? AS \(|^WITH "[a-z_]+" AS \(/gm)?.length, 1, t.sql);
  });
});
