/**
 * A needle with common parts searched through its rare trigrams (src/sql/postgres/search.ts
 * searchForIndexes; the common trigrams measured from the data and frozen with their rare-trigram
 * function by src/storage/commonTrigrams.ts): the same rows as the needle as written, the index
 * given only the rare trigrams (a rare-trigram index) or the rare pattern (a plain `gin_trgm_ops`
 * one), and the trigrams counted as pg_trgm counts them, for needles, LIKE patterns and regexes.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { COMMON_SHARE } from '../../src/storage/commonTrigrams.js';
import { coveringIndexes } from '../../src/storage/coveringIndexes.js';
import {
  RARE_TRIGRAMS_MAX_CHARS,
  rareTrigramsFunctionOf,
  rareTrigramsFunctionSql,
  trigramOpclass,
  trigramSchema,
} from '../../src/storage/searchIndexes.js';
import { upkeepIndexes } from '../../src/storage/indexUpkeep.js';
import { createLogTable, ensurePartitions } from '../../src/storage/logTables.js';
import { searchHoursAt, type SourceLookup, type SourceTable } from '../../src/sql/catalog.js';
import { containedNeedle, escapeLike } from '../../src/sql/postgres/search.js';
import { containedTrigrams, likeLiterals, needleTrigrams, rarePart, trigramsOf } from '../../src/sql/postgres/trigrams.js';
import { regexLiterals } from '../../src/sql/postgres/regexLiterals.js';
import { testDatabase } from '../support/db.js';
import { runTranslation } from '../support/translation.js';

const DAY = 86_400_000;
const md5 = (i: number) => createHash('md5').update(String(i)).digest('hex');
const MESSAGES = 400;
/** Every message has `Mozilla/5.0` and `GET /rest/v1/todos`; `req=` a hex token of its own. */
const message = (i: number) => `GET /rest/v1/todos req=${md5(i)} ua=Mozilla/5.0 (X11; Linux)`;
/** `n` CJK characters at random (xorshift, fixed seed): nearly every trigram of them distinct. */
function longCjk(n: number): string {
  let x = 2463534242;
  let out = '';
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out += String.fromCharCode(0x4e00 + ((x >>> 0) % 20902));
  }
  return out;
}
/**
 * Messages outside ASCII (pg_trgm hashes a trigram with such a character) and one longer than a
 * tsvector holds (RARE_TRIGRAMS_MAX_CHARS): ids `u1`…, after the MESSAGES ones.
 */
const UNUSUAL = [
  'le café est',
  'cafés',
  'axéb',
  'HerrMüller',
  'Müller',
  'naïve x',
  `zzlongtoken ${longCjk(140_000)}`,
  // 28,000 characters: the function still filters its trigrams.
  'Mozilla'.repeat(4000),
];

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
    await pool.query(
      `INSERT INTO logs.${table} (id, project, "timestamp", event_message)
       SELECT 'u' || i, 'p', $1::timestamptz + interval '2 hours' + i * interval '1 second', m FROM unnest($2::text[]) WITH ORDINALITY AS x(m, i)`,
      [new Date(Math.floor(now / DAY) * DAY).toISOString(), UNUSUAL],
    );
    await pool.query(`ANALYZE logs.${table}`);
    // Into today's partition. As of two days on both partitions are over: the common trigrams of
    // the newest (today's) are measured and frozen, then the search indexes built on their function.
    const done = await upkeepIndexes(pool, table, [], ['event_message'], now + 2 * DAY);
    assert.ok(
      done.some((d) => /^measured \d+ common trigrams of event_message on /.test(d)),
      done.join('\n'),
    );
    const { rows } = await pool.query<{ trigrams: string[]; sampled: number; index_function: string }>(
      `SELECT trigrams, sampled, index_function FROM search_common_trigrams WHERE table_name = $1 AND column_name = 'event_message'`,
      [table],
    );
    common = rows[0].trigrams;
    rare = rows[0].index_function;
    assert.ok(
      done.some((d) => d.startsWith(`froze the ${common.length} common trigrams of event_message`)),
      done.join('\n'),
    );
    assert.ok(done.indexOf(done.find((d) => d.startsWith('froze'))!) < done.findIndex((d) => d.startsWith('built')), done.join('\n'));
    source = {
      name: 'rare.trigrams',
      pgSchema: 'logs',
      table,
      fields: {},
      commonTrigrams: { event_message: common },
      rareTrigramIndexes: { event_message: rare },
    };
  });
  let rare = '';

  const withStats: SourceLookup = (name) => (name === 'rare.trigrams' ? source : undefined);
  const withoutStats: SourceLookup = (name) =>
    name === 'rare.trigrams' ? { ...source, commonTrigrams: undefined, rareTrigramIndexes: undefined } : undefined;

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
    // Frozen: a run on a later day measures nothing, and its indexes stay on the same function.
    const again = await upkeepIndexes(pool, table, [], ['event_message'], Date.now() + 3 * DAY);
    assert.ok(!again.some((d) => d.startsWith('measured') || d.startsWith('froze')), again.join('\n'));
    const { rows: defs } = await pool.query<{ def: string }>(
      `SELECT pg_get_indexdef(i.indexrelid) AS def FROM pg_index i JOIN pg_inherits h ON h.inhrelid = i.indrelid
        WHERE h.inhparent = $1::regclass AND pg_get_indexdef(i.indexrelid) LIKE '%USING gin%'`,
      [`logs.${table}`],
    );
    assert.equal(defs.length, 2, 'both days');
    for (const { def } of defs)
      assert.match(def, new RegExp(`USING gin \\(${rare.replace('.', '\\.')}\\(event_message\\)\\) WITH \\(fastupdate='?off'?\\)`), def);
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
      else {
        if (part !== undefined)
          assert.ok(
            rewritten.translation.sql.includes(`LIKE '%${escapeLike(part)}%') AND (("t0"."event_message" || '') LIKE`),
            rewritten.translation.sql,
          );
        // The rare-trigram index is asked for the needle's trigrams less the common ones.
        const asked = [...containedTrigrams(needle)].filter((t) => !common.includes(t)).sort();
        assert.ok(asked.length > 0);
        assert.ok(
          rewritten.translation.sql.includes(`${rare}("t0"."event_message") @> ARRAY[${asked.map((t) => `'${t}'`).join(', ')}]`),
          rewritten.translation.sql,
        );
      }
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

  it('when the needle is a parameter, then the rare-trigram index is asked for the trigrams Postgres finds in its words, and the planner uses it', async () => {
    const query = `select t.id from \`rare.trigrams\` t where regexp_contains(t.event_message, @p)`;
    const p = `${hex} ua=Mozilla`;
    const rewritten = await runTranslation(query, { sources: withStats, params: { p } });
    const plain = await runTranslation(query, { sources: withoutStats, params: { p } });
    assert.match(rewritten.translation.sql, /\(cardinality\(logs\.search_inner_trigrams\(logs\.search_rare_trigrams_\w+\(/);
    assert.doesNotMatch(plain.translation.sql, /cardinality/);
    assert.deepEqual(rewritten.rows, [{ id: 'e43' }]);
    assert.deepEqual(plain.rows, rewritten.rows);
    const { pool } = await testDatabase();
    const client = await pool.connect();
    try {
      await client.query('BEGIN; SET LOCAL enable_seqscan = off');
      const plan = async (value: string) =>
        (await client.query(`EXPLAIN ${rewritten.translation.sql}`, [value])).rows
          .map((r: Record<string, string>) => r['QUERY PLAN'])
          .join('\n');
      // Planned with its value: the OR folded to the index's test on the token's trigrams.
      const withToken = await plan(p);
      assert.match(withToken, /Bitmap Index Scan on rare_trgm_\w+_search_/, withToken);
      assert.doesNotMatch(withToken, /cardinality/, withToken);
      // Common words only: nothing to ask, the OR folded to true.
      const commonOnly = await plan('ua=Mozilla');
      assert.doesNotMatch(commonOnly, /@>|cardinality/, commonOnly);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('when a needle has characters outside ASCII, literal or a parameter, or a message is longer than a tsvector holds, then the rare-trigram index loses no row', async () => {
    const all = [
      ...Array.from({ length: MESSAGES }, (_, i) => ({ id: `e${i + 1}`, m: message(i) })),
      ...UNUSUAL.map((m, i) => ({ id: `u${i + 1}`, m })),
    ];
    const expectedOf = (needle: string) =>
      all
        .filter((r) => r.m.includes(needle))
        .map((r) => ({ id: r.id }))
        .sort((a, b) => a.id.localeCompare(b.id));
    for (const needle of ['é', 'café', 'Müller', 'ï', 'naïve x', 'xéb', 'zzlongtoken', UNUSUAL[6].slice(-30), 'Mozilla/5.0 (X11']) {
      const expected = expectedOf(needle);
      assert.ok(expected.length > 0, needle);
      const literal = await runTranslation(
        `select t.id from \`rare.trigrams\` t where strpos(t.event_message, '${needle}') > 0 order by t.id`,
        { sources: withStats },
      );
      assert.deepEqual(literal.rows, expected, `${needle}: ${literal.translation.sql.slice(0, 400)}`);
      const byParameter = await runTranslation(
        `select t.id from \`rare.trigrams\` t where regexp_contains(t.event_message, @p) order by t.id`,
        {
          sources: withStats,
          params: { p: needle.replace(/[()]/g, '\\$&') },
        },
      );
      assert.deepEqual(byParameter.rows, expected, needle);
      const like = await runTranslation(`select t.id from \`rare.trigrams\` t where t.event_message like @p order by t.id`, {
        sources: withStats,
        params: { p: `%${needle}%` },
      });
      assert.deepEqual(like.rows, expected, needle);
    }
    // A pattern whose words (32,000 characters with the spaces between them) are longer than the
    // function filters, matching a message it filters.
    const longPattern = await runTranslation(`select t.id from \`rare.trigrams\` t where t.event_message like @p order by t.id`, {
      sources: withStats,
      params: { p: 'Mozilla%'.repeat(4000) },
    });
    assert.deepEqual(longPattern.rows, [{ id: 'u8' }]);
    // The long message keeps all its trigrams: the index is built and read.
    const { pool } = await testDatabase();
    await assert.rejects(pool.query(`SELECT array_to_tsvector(show_trgm($1))`, [UNUSUAL[6]]), /too long for tsvector/);
    const { rows } = await pool.query<{ same: boolean }>(`SELECT ${rare}($1) = show_trgm($1) AS same`, [UNUSUAL[6]]);
    assert.ok(rows[0].same && UNUSUAL[6].length > RARE_TRIGRAMS_MAX_CHARS);
  });

  it("when a text holds another, then pg_trgm finds the inner text's contained trigrams in it, outside ASCII too", async () => {
    const { pool } = await testDatabase();
    const piece = fc.constantFrom('a', 'B', 'c', '1', 'Zq', ' ', '-', '/', '=', '.', '_', '%', 'xyz', 'MOZ', 'é', 'ß', '日本', 'ab😀');
    const text = fc.array(piece, { maxLength: 10 }).map((cs) => cs.join(''));
    await fc.assert(
      fc.asyncProperty(text, text, text, async (before, inner, after) => {
        const trigrams = [...containedTrigrams(inner)];
        const { rows } = await pool.query<{ holds: boolean }>(`SELECT show_trgm($1) @> $2::text[] AS holds`, [
          before + inner + after,
          trigrams,
        ]);
        assert.ok(rows[0].holds, JSON.stringify([before, inner, after, trigrams]));
      }),
      { numRuns: 80 },
    );
    assert.deepEqual([...containedTrigrams('abc-de fgh')].sort(), ['  d', '  f', ' de', ' fg', 'abc', 'bc ', 'de ', 'fgh']);
    assert.deepEqual([...containedTrigrams('xyzé')].sort(), ['xyz'], 'no padding beside a character outside ASCII');
    // `I` lowercases to `ı` in a Turkish locale; in a case-insensitive regex `i` may match an `I` of the text.
    assert.deepEqual([...containedTrigrams('bit BIT')].sort(), ['  b', 'bit', 'it '].sort());
    assert.deepEqual([...containedTrigrams('bit BIT', true)], ['  b']);
    assert.deepEqual(likeLiterals('%a\\%b_c%'), ['a%b', 'c']);
    assert.equal(likeLiterals('ab\\'), undefined);
  });

  it('when a regex matches a text, then the texts regexLiterals requires are in it, and pg_trgm finds their trigrams there', async () => {
    const { pool } = await testDatabase();
    // Atoms as a regex and a text each matches; quantified; joined. Postgres says whether it matches.
    const chars = fc.constantFrom('a', 'b', 'Q', '1', ' ', '-', '/', '.', '+', '(', '[', '{', '|', '\\');
    const escape = (c: string) => (/[A-Za-z0-9 ]/.test(c) ? c : `\\${c}`);
    const atom = fc.oneof(
      chars.map((c) => ({ re: escape(c), text: c })),
      fc.constantFrom('abc', 'Xy9z', 'q1w2e3').map((w) => ({ re: w, text: w })),
      fc.constantFrom(
        { re: '.', text: 'z' },
        { re: '[ab]', text: 'b' },
        { re: '(ab|c)', text: 'c' },
        { re: '\\d', text: '7' },
        { re: '\\s', text: ' ' },
      ),
    );
    const quantified = fc.tuple(atom, fc.constantFrom('', '', '', '*', '+', '?', '{0,2}', '{2}', '+?', '??')).map(([a, q]) => {
      if (!q) return a;
      const times = q.startsWith('*') || q.startsWith('?') || q === '{0,2}' ? 0 : q === '{2}' ? 2 : 1;
      return {
        re: `${a.re.length > 1 && !a.re.startsWith('\\') && !a.re.startsWith('[') && !a.re.startsWith('(') ? `(${a.re})` : a.re}${q}`,
        text: a.text.repeat(times),
      };
    });
    const pattern = fc.tuple(
      fc.array(quantified, { minLength: 1, maxLength: 8 }),
      fc.constantFrom('', '(?i)'),
      fc.string({ maxLength: 4 }),
    );
    let asked = 0;
    await fc.assert(
      fc.asyncProperty(pattern, async ([atoms, options, around]) => {
        const re = options + atoms.map((a) => a.re).join('');
        const text = around + atoms.map((a) => a.text).join('') + around;
        const runs = regexLiterals(re);
        assert.ok(runs, re);
        const { rows } = await pool.query<{ matches: boolean; holds: boolean }>(
          `SELECT $1 ~ $2 AS matches, show_trgm($1) @> $3::text[] AS holds`,
          [text, re, runs.flatMap((r) => [...containedTrigrams(r)])],
        );
        assert.ok(rows[0].matches, JSON.stringify([re, text]));
        for (const r of runs) assert.ok(text.toLowerCase().includes(r.toLowerCase()), JSON.stringify([re, text, r]));
        assert.ok(rows[0].holds, JSON.stringify([re, text, runs]));
        if (runs.some((r) => containedTrigrams(r).size)) asked++;
      }),
      { numRuns: 150 },
    );
    assert.ok(asked > 30, `only ${asked} of 150 regexes asked the index for anything`);
    assert.deepEqual(regexLiterals('abc+d*ef{0,1}g\\.h'), ['abc', 'e', 'g.h']);
    assert.deepEqual(regexLiterals('(?i)foo[a-z]bar(baz)?qux'), ['foo', 'bar', 'qux']);
    for (const unread of ['(?#[)((])abc(?#[))?(])', 'a|b', '(?x)a b', '***=abc', '\\x41bc', 'a\\1', 'ab{', 'a)'])
      assert.equal(regexLiterals(unread), undefined, unread);
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

  it("when the needle has a common part, then the index condition holds only its rare trigrams (a rare-trigram index) or its rare pattern (a plain one) and the needle is the heap's recheck", async () => {
    const { pool } = await testDatabase();
    const query = `select t.id from \`rare.trigrams\` t where regexp_contains(t.event_message, '${hex.slice(-10)} ua=Mozilla')`;
    const { translation } = await runTranslation(query, { sources: withStats });
    const client = await pool.connect();
    const planOf = async () =>
      (await client.query(`EXPLAIN ${translation.sql}`)).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    try {
      await client.query('BEGIN; SET LOCAL enable_seqscan = off');
      const plan = await planOf();
      const conditions = plan.split('\n').filter((l) => /Index Cond/.test(l));
      assert.ok(conditions.length > 0, plan);
      for (const c of conditions) {
        const asked = /@> '\{([^}]*)\}'::text\[\]\)$/.exec(c)?.[1].split(',') ?? [];
        assert.ok(asked.length > 0, c);
        for (const t of asked) assert.ok(!common.includes(t.replace(/"/g, '')), `${t} is common: ${c}`);
        assert.deepEqual(
          asked.map((t) => t.replace(/"/g, '')).sort(),
          [...containedTrigrams(`${hex.slice(-10)} ua=Mozilla`)].filter((t) => !common.includes(t)).sort(),
        );
      }
      assert.match(plan, /Bitmap Index Scan on rare_trgm_\w+_search_/);
      assert.match(plan, /Filter: .*\(\(event_message \|\| ''::text\) ~~ '%[0-9a-f]+ ua=Mozilla%'::text\)/);
      // The days of an upgrade whose plain index is not rebuilt yet: the rare pattern goes to it.
      const { rows: indexes } = await client.query<{ name: string; partition: string }>(
        `SELECT c.relname AS name, t.relname AS partition FROM pg_inherits h JOIN pg_class t ON t.oid = h.inhrelid
           JOIN pg_index i ON i.indrelid = t.oid JOIN pg_class c ON c.oid = i.indexrelid
          WHERE h.inhparent = $1::regclass AND c.relname LIKE '%\\_search\\_%'`,
        [`logs.${table}`],
      );
      assert.equal(indexes.length, 2);
      for (const { name, partition } of indexes) {
        await client.query(`DROP INDEX logs."${name}"`);
        await client.query(`CREATE INDEX "${name}" ON logs."${partition}" USING gin (event_message gin_trgm_ops)`);
      }
      const plainPlan = await planOf();
      const plainConditions = plainPlan.split('\n').filter((l) => /Index Cond/.test(l));
      assert.ok(plainConditions.length > 0, plainPlan);
      for (const c of plainConditions) {
        assert.match(c, new RegExp(`event_message ~~ '%${hex.slice(-10)} %'`), plainPlan);
        assert.doesNotMatch(c, /Mozilla/, plainPlan);
      }
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
      assert.equal(context.sources.lookup(name)!.rareTrigramIndexes, undefined, 'not frozen');
      await pool.query(`UPDATE search_common_trigrams SET index_function = $2 WHERE table_name = $1`, [
        created.table_name,
        rareTrigramsFunctionOf(['moz']),
      ]);
      await context.sources.reload();
      assert.equal(context.sources.lookup(name)!.rareTrigramIndexes, undefined, 'the function does not exist (yet)');
      const opclass = (await trigramOpclass(pool))!;
      for (const set of [['moz'], ['zzz']])
        await pool.query(rareTrigramsFunctionSql(rareTrigramsFunctionOf(set), trigramSchema(opclass), set));
      await context.sources.reload();
      assert.deepEqual(context.sources.lookup(name)!.rareTrigramIndexes, { event_message: rareTrigramsFunctionOf(['moz']) });
      // Another set's function (a row written by another version meanwhile): not this set's, not handed over.
      await pool.query(`UPDATE search_common_trigrams SET index_function = $2 WHERE table_name = $1`, [
        created.table_name,
        rareTrigramsFunctionOf(['zzz']),
      ]);
      await context.sources.reload();
      assert.equal(context.sources.lookup(name)!.rareTrigramIndexes, undefined, 'not the function of this set');
      await pool.query(`DELETE FROM search_common_trigrams WHERE table_name = $1`, [created.table_name]);
      await context.sources.reload();
      assert.equal(context.sources.lookup(name)!.commonTrigrams, undefined);
    } finally {
      await pool.query(`DELETE FROM search_common_trigrams WHERE table_name = $1`, [created.table_name]);
      await context.sources.delete(name);
    }
  });
});
