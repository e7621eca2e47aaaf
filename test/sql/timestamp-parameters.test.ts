/**
 * A parameter read as a TIMESTAMP goes through `logs.bq_timestamp` (an IMMUTABLE function) so the
 * planner prunes partitions for a window given by parameters. It must read every string exactly
 * like the inline rule it replaces, whatever the session TimeZone.
 */
import assert from 'node:assert/strict';
import { insertEvents, testDatabase } from '../support/db.js';
import { expectTranslation } from '../support/translation.js';
import { initTranslator, translateQuery } from '../../src/sql/index.js';
import { loadSources } from '../support/db.js';

const INLINE_RULE = (v: string) =>
  `CASE WHEN ${v} ~ '(:[0-9]{2}(\\.[0-9]*)? *([zZ]|[+-][0-9:]+)|[A-Za-z]) *$' THEN ${v}::timestamptz ELSE timezone('UTC', ${v}::timestamp) END`;

const STRINGS = [
  '2026-07-01',
  '2026-07-01 12:00',
  '2026-07-01T12:00:00',
  '2026-07-01 12:00:00.123456',
  '2026-07-01T12:00:00Z',
  '2026-07-01T12:00:00.5z',
  '2026-07-01 12:00:00+05',
  '2026-07-01 12:00:00-03:30',
  '2026-07-01 12:00:00 UTC',
  '2026-07-01 12:00:00 America/New_York',
  '2026-01-15 23:59:59.999999 +01:00',
  '2026-07-01 12:00:00 PST',
  ' 2026-07-01 12:00 ',
];

describe('timestamp parameters: logs.bq_timestamp', () => {
  for (const zone of ['UTC', 'America/New_York', 'Asia/Kolkata']) {
    it(`when the session TimeZone is ${zone}, then every string gives the inline rule's instant`, async () => {
      const { pool } = await testDatabase();
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(`SET LOCAL TimeZone = '${zone}'`);
        for (const s of STRINGS) {
          const { rows } = await client.query({
            text: `SELECT logs.bq_timestamp($1::text) = ${INLINE_RULE('$1::text')} AS same, logs.bq_timestamp($1::text)::text AS got`,
            values: [s],
          });
          assert.equal(rows[0].same, true, `${s} under ${zone}: ${rows[0].got}`);
        }
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    });
  }

  it('when the string is not a time, then the query fails with a data exception, like the cast', async () => {
    const { pool } = await testDatabase();
    await assert.rejects(
      pool.query({ text: 'SELECT logs.bq_timestamp($1::text)', values: ['yesterday-ish'] }),
      (e: { code?: string }) => e.code?.startsWith('22') === true,
    );
  });

  it('when a guarded bound is empty, then the cast is never evaluated', async () => {
    const P = 'sqltest-tsparam-empty';
    await insertEvents('pgbouncer.logs.prod', [{ project: P, event_message: 'one' }]);
    const sql = `select count(*) as n from \`pgbouncer.logs.prod\` where project = '${P}'
      and case when coalesce(@start, '') = '' then true else timestamp > cast(@start as timestamp) end`;
    await expectTranslation(sql, { params: { start: '' } }).toReturn([{ n: 1 }]);
    await expectTranslation(sql, { params: { start: null } }).toReturn([{ n: 1 }]);
  });

  it('when a window comes from parameters, then the planner keeps only its partitions', async () => {
    await initTranslator();
    const { pool } = await testDatabase();
    const t = translateQuery({
      query: 'select count(*) as n from `pgbouncer.logs.prod` where timestamp > cast(@start as timestamp) and timestamp <= @end',
      sources: await loadSources(),
    });
    assert.match(t.sql, /logs\.bq_timestamp\(\$1::text\)/);
    const day = Math.floor(Date.now() / 86400_000) * 86400_000;
    const values = [new Date(day + 3600_000).toISOString(), new Date(day + 7200_000).toISOString()];
    const { rows } = await pool.query({ text: `EXPLAIN (FORMAT JSON) ${t.sql}`, values });
    const scanned: string[] = [];
    const walk = (node: Record<string, unknown>) => {
      if (typeof node['Relation Name'] === 'string') scanned.push(node['Relation Name']);
      for (const child of (node.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(child);
    };
    walk(rows[0]['QUERY PLAN'][0].Plan);
    const today = new Date(day).toISOString().slice(0, 10).replace(/-/g, '');
    // Pruned while planning: the plan names today's partition only (not "Subplans Removed" at start-up).
    assert.deepEqual(scanned, [`pgbouncer_logs_prod_p${today}`]);
  });
});
