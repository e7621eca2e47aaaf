/**
 * A needle with common parts searched through its rare part (src/sql/postgres/search.ts
 * searchForIndexes; the common trigrams measured from the data by src/storage/commonTrigrams.ts):
 * the same rows as the needle as written, the index given only the rare pattern, and the
 * trigrams counted as pg_trgm counts them.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { COMMON_SHARE } from '../../src/storage/commonTrigrams.js';
import { coveringIndexes } from '../../src/storage/coveringIndexes.js';
import { upkeepIndexes } from '../../src/storage/indexUpkeep.js';
import { createLogTable, ensurePartitions } from '../../src/storage/logTables.js';
import { searchHoursAt, type SourceLookup, type SourceTable } from '../../src/sql/catalog.js';
import { containedNeedle, escapeLike } from '../../src/sql/postgres/search.js';
import { needleTrigrams, rarePart, trigramsOf } from '../../src/sql/postgres/trigrams.js';
import { testDatabase } from '../support/db.js';
import { runTranslation } from '../support/translation.js';

const DAY = 86_400_000;
const md5 = (i: number) => createHash('md5').update(String(i)).digest('hex');
const MESSAGES = 400;
/** Every message has `Mozilla/5.0` and `GET /rest/v1/todos`; `req=` a hex token of its own. */
const message = (i: number) => `GET /rest/v1/todos req=${md5(i)} ua=Mozilla/5.0 (X11; Linux)`;

describe('rare trigrams: a needle searched through its rare part', function () {
  this.timeout(120_000);
  const table = `rare_trgm_${Date.now().toString(36)}`;
  let common: string[] = [];
  let source: SourceTable;

  before(async () => {
    const { pool } = await testDatabase();
    const now = Date.now();
    await createLogTable(pool, table, [], coveringIndexes(table, []), { lz4: false });
    await ensurePartitions(pool, table, now - DAY, now);
    await pool.query(
      `INSERT INTO logs.${table} (id, project, "timestamp", event_message)
       SELECT 'e' || i, 'p', $1::timestamptz + i * interval '1 second', m FROM unnest($2::text[]) WITH ORDINALITY AS x(m, i)`,
      [new Date(Math.floor(now / DAY) * DAY).toISOString(), Array.from({ length: MESSAGES }, (_, i) => message(i))],
    );
    await pool.query(`ANALYZE logs.${table}`);
    // Into today's partition. As of two days on both partitions are over: their search indexes are
    // built, then the common trigrams of the newest (today's) measured.
    const done = await upkeepIndexes(pool, table, [], ['event_message'], now + 2 * DAY);
    assert.ok(
      done.some((d) => /^measured \d+ common trigrams of event_message on /.test(d)),
      done.join('\n'),
    );
    const { rows } = await pool.query<{ trigrams: string[]; sampled: number }>(
      `SELECT trigrams, sampled FROM search_common_trigrams WHERE table_name = $1 AND column_name = 'event_message'`,
      [table],
    );
    common = rows[0].trigrams;
    source = { name: 'rare.trigrams', pgSchema: 'logs', table, fields: {}, commonTrigrams: { event_message: common } };
  });

  const withStats: SourceLookup = (name) => (name === 'rare.trigrams' ? source : undefined);
  const withoutStats: SourceLookup = (name) => (name === 'rare.trigrams' ? { ...source, commonTrigrams: undefined } : undefined);

  it('when a token is in every message, then its trigrams are measured common, and a token of one message is not', async () => {
    for (const t of ['moz', 'zil', 'lla', 'tod', 'res', 'req', 'lin']) assert.ok(common.includes(t), `${t} in ${common.join('|')}`);
    for (const t of needleTrigrams(md5(42).slice(0, 12))) assert.ok(!common.includes(t), `${t} is not common`);
    assert.ok(common.length <= 300);
    const { pool } = await testDatabase();
    // Each common trigram is in more than COMMON_SHARE of the messages (here all are sampled).
    const { rows } = await pool.query<{ t: string; n: number }>(
      `SELECT t, count(*)::int AS n FROM logs.${table}, unnest(show_trgm(event_message)) t WHERE t = ANY($1) GROUP BY t`,
      [common],
    );
    for (const r of rows) assert.ok(r.n > COMMON_SHARE * MESSAGES, `${r.t}: ${r.n}`);
    assert.equal(rows.length, common.length);
    // Kept once per day: a second run measures nothing.
    const again = await upkeepIndexes(pool, table, [], ['event_message'], Date.now() + 2 * DAY);
    assert.ok(!again.some((d) => d.startsWith('measured')), again.join('\n'));
  });

  it("when words are padded as pg_trgm pads them, then the trigrams are show_trgm's", async () => {
    const { pool } = await testDatabase();
    const text = fc
      .array(fc.constantFrom('a', 'B', 'c', '1', '9', 'Zq', ' ', '-', '/', '=', '.', '_', '%', "'", 'xyz', 'MOZ'), { maxLength: 12 })
      .map((cs) => cs.join(''));
    await fc.assert(
      fc.asyncProperty(text, async (t) => {
        const { rows } = await pool.query<{ trigrams: string[] }>(`SELECT show_trgm($1) AS trigrams`, [t]);
        assert.deepEqual([...trigramsOf(t, { padStart: true, padEnd: true })].sort(), [...rows[0].trigrams].sort(), JSON.stringify(t));
      }),
      { numRuns: 80 },
    );
  });

  it('when a needle has a common part, then the longest part whose trigrams are all rare is chosen', () => {
    const set = new Set(common);
    const hex = md5(7);
    // `ua`, `Mozilla` and `req` are common: the part is around the token.
    const part = rarePart(`req=${hex} ua=Mozilla`, set)!;
    assert.ok(part.includes(hex) && !/ua|req/.test(part), part);
    assert.ok(`req=${hex} ua=Mozilla`.includes(part));
    for (const t of needleTrigrams(part)) assert.ok(!set.has(t), t);
    assert.equal(rarePart(hex, set), undefined, 'all rare: left as it is');
    assert.equal(rarePart('Mozilla/5.0', set), undefined, 'all common: left as it is');
    assert.equal(rarePart('3867a4c16d4558de', new Set(trigramsOf('6d4558de', { padStart: true, padEnd: true }))), '3867a4c16d');
    assert.equal(rarePart('héllo Mozilla', set), undefined, 'not ASCII: left as it is');
    assert.equal(containedNeedle('%a\\_b%'), 'a_b');
    assert.equal(containedNeedle('%a_b%'), undefined);
    assert.equal(containedNeedle('%ab\\%'), undefined);
    assert.equal(containedNeedle('ab%'), undefined);
  });

  const hex = md5(42);
  const needles = {
    'a token and the common text after it': `${hex.slice(-10)} ua=Mozilla`,
    'the common text before a token': `todos req=${hex.slice(0, 6)}`,
    'punctuation around a token': `=${hex} ua=Mozilla/5`,
    'mixed case': `${hex.slice(-8)} UA=MOZILLA`,
    'a word boundary inside a token': `${hex.slice(20)} ua`,
    'a LIKE wildcard taken as text': `req=${hex.slice(0, 4)}_ ua=Mozilla`,
    'all common': 'ua=Mozilla',
    'all common with a LIKE wildcard taken as text': 'ua=Mozilla_',
    'all rare': hex.slice(3, 15),
  };
  for (const [what, needle] of Object.entries(needles))
    it(`when the needle is ${what}, then the rows are the needle's as written`, async () => {
      const query = `select t.id from \`rare.trigrams\` t where regexp_contains(t.event_message, '${needle}') order by t.id`;
      const rewritten = await runTranslation(query, { sources: withStats });
      const plain = await runTranslation(query, { sources: withoutStats });
      const expected = Array.from({ length: MESSAGES }, (_, i) => i)
        .filter((i) => message(i).includes(needle))
        .map((i) => ({ id: `e${i + 1}` }))
        .sort((a, b) => a.id.localeCompare(b.id));
      assert.deepEqual(plain.rows, expected);
      assert.deepEqual(rewritten.rows, expected, rewritten.translation.sql);
      const part = rarePart(needle, new Set(common));
      assert.equal(part === undefined, what.startsWith('all '), `rare part of ${needle}: ${part}`);
      // All common: no index serves it, so the scan's own form, strpos; all rare: as written.
      if (what.startsWith('all common'))
        assert.ok(rewritten.translation.sql.includes(`(strpos("t0"."event_message", '${needle}') > 0)`), rewritten.translation.sql);
      else if (part === undefined) assert.equal(rewritten.translation.sql, plain.translation.sql);
      else
        assert.ok(
          rewritten.translation.sql.includes(`LIKE '%${escapeLike(part)}%') AND (("t0"."event_message" || '') LIKE`),
          rewritten.translation.sql,
        );
    });

  it('when lower(m) LIKE a lower-case ASCII needle with a common part, then ILIKE is given the rare part with the same rows', async () => {
    const query = `select t.id from \`rare.trigrams\` t where lower(t.event_message) like '%${hex.slice(-6)} ua=mozilla%' order by t.id`;
    const rewritten = await runTranslation(query, { sources: withStats });
    const plain = await runTranslation(query, { sources: withoutStats });
    assert.match(rewritten.translation.sql, /ILIKE '%[0-9a-f]+ %'\) AND \(\("t0"."event_message" \|\| ''\) ILIKE/);
    assert.deepEqual(rewritten.rows, plain.rows);
    assert.deepEqual(rewritten.rows, [{ id: 'e43' }]);
  });

  it("when the needle is searched in a CTE's column from sandboxed sql (the logs explorer's shape), then that column gets the rare part too, also when the endpoint's CTEs are reused", async () => {
    const endpoint = 'with logs as (select id, event_message from `rare.trigrams`) select id from logs';
    const sandboxSql = `with hits as (select l.id, l.event_message as m from logs l) select h.id from hits h where regexp_contains(h.m, '${hex.slice(-10)} ua=Mozilla') order by h.id`;
    const plain = await runTranslation(endpoint, { sources: withoutStats, sandboxSql });
    // Twice: the second translation reuses the endpoint's resolved CTEs (src/sql/index.ts) and their state.
    for (let i = 0; i < 2; i++) {
      const rewritten = await runTranslation(endpoint, { sources: withStats, sandboxSql });
      assert.match(
        rewritten.translation.sql,
        /LIKE '%[0-9a-f]+ ?%'\) AND \(\("t\d+"."m" \|\| ''\) LIKE '%[0-9a-f]+ ua=Mozilla%'\)/,
        rewritten.translation.sql,
      );
      assert.deepEqual(rewritten.rows, plain.rows);
      assert.deepEqual(rewritten.rows, [{ id: 'e43' }]);
    }
  });

  it('when the needle is a parameter, then it is left as it is', async () => {
    const query = `select t.id from \`rare.trigrams\` t where regexp_contains(t.event_message, @p)`;
    const rewritten = await runTranslation(query, { sources: withStats, params: { p: `${hex} ua=Mozilla` } });
    const plain = await runTranslation(query, { sources: withoutStats, params: { p: `${hex} ua=Mozilla` } });
    assert.equal(rewritten.translation.sql, plain.translation.sql);
    assert.deepEqual(rewritten.rows, [{ id: 'e43' }]);
  });

  it('when every trigram of the needle is common, or it has none, then the scan is not split by the search hours; a needle with a rare trigram, a parameter or a regex is split', async () => {
    const hours = searchHoursAt(Date.now());
    const cases: [string, string, Record<string, string>, boolean][] = [
      ['a word in every message', `regexp_contains(t.event_message, 'Mozilla')`, {}, false],
      ['common words with punctuation', `lower(t.event_message) like '%ua=mozilla/5%'`, {}, false],
      ['shorter than a trigram', `regexp_contains(t.event_message, 'x1')`, {}, false],
      ['a token of one message', `regexp_contains(t.event_message, '${hex.slice(0, 12)}')`, {}, true],
      ['a token with common text around it', `regexp_contains(t.event_message, '${hex.slice(-10)} ua=Mozilla')`, {}, true],
      [
        'a common word and a rare token',
        `regexp_contains(t.event_message, 'Mozilla') and regexp_contains(t.event_message, '${hex.slice(0, 12)}')`,
        {},
        true,
      ],
      ['a parameter holding a common word', `regexp_contains(t.event_message, @p)`, { p: 'Mozilla' }, true],
      ['a regular expression', `regexp_contains(t.event_message, 'Mozil+a')`, {}, true],
    ];
    for (const [what, test, params, split] of cases) {
      const query = `select t.id from \`rare.trigrams\` t where ${test} order by t.id`;
      const withHours = await runTranslation(query, { sources: withStats, searchHours: hours, params });
      const without = await runTranslation(query, { sources: withStats, params });
      assert.equal(/<@/.test(withHours.translation.sql), split, `${what}: ${withHours.translation.sql}`);
      assert.deepEqual(withHours.rows, without.rows, what);
    }
    // Without measured common trigrams only a needle without trigrams is left unsplit.
    const common = await runTranslation("select t.id from `rare.trigrams` t where regexp_contains(t.event_message, 'Mozilla')", {
      sources: withoutStats,
      searchHours: hours,
    });
    assert.match(common.translation.sql, /<@/);
    const short = await runTranslation("select t.id from `rare.trigrams` t where regexp_contains(t.event_message, 'x1')", {
      sources: withoutStats,
      searchHours: hours,
    });
    assert.doesNotMatch(short.translation.sql, /<@/);
  });

  it("when the needle has a common part, then the index condition holds only the rare pattern and the needle is the heap's recheck", async () => {
    const { pool } = await testDatabase();
    const query = `select t.id from \`rare.trigrams\` t where regexp_contains(t.event_message, '${hex.slice(-10)} ua=Mozilla')`;
    const { translation } = await runTranslation(query, { sources: withStats });
    const client = await pool.connect();
    try {
      await client.query('BEGIN; SET LOCAL enable_seqscan = off');
      const plan = (await client.query(`EXPLAIN ${translation.sql}`)).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      const conditions = plan.split('\n').filter((l) => /Index Cond/.test(l));
      assert.ok(conditions.length > 0, plan);
      for (const c of conditions) {
        assert.match(c, new RegExp(`event_message ~~ '%${hex.slice(-10)} %'`), plan);
        assert.doesNotMatch(c, /Mozilla/, plan);
      }
      assert.match(plan, /Bitmap Index Scan on rare_trgm_\w+_search_/);
      assert.match(plan, /Filter: \(\(event_message \|\| ''::text\) ~~ '%[0-9a-f]+ ua=Mozilla%'::text\)/);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('when the catalog reads the kept common trigrams, then the source it hands the translator carries them', async () => {
    // A source of its own: the shared database's default sources may have measured rows already.
    const { context, pool } = await testDatabase();
    const name = `rare.catalog.${Date.now().toString(36)}`;
    const created = await context.sources.create({ name });
    try {
      await pool.query(
        `INSERT INTO search_common_trigrams (table_name, column_name, partition, sampled, trigrams) VALUES ($1, 'event_message', 'x', 1, '{moz}')`,
        [created.table_name],
      );
      await context.sources.reload();
      assert.deepEqual(context.sources.lookup(name)!.commonTrigrams, { event_message: ['moz'] });
      await pool.query(`DELETE FROM search_common_trigrams WHERE table_name = $1`, [created.table_name]);
      await context.sources.reload();
      assert.equal(context.sources.lookup(name)!.commonTrigrams, undefined);
    } finally {
      await pool.query(`DELETE FROM search_common_trigrams WHERE table_name = $1`, [created.table_name]);
      await context.sources.delete(name);
    }
  });
});
