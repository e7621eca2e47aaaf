/**
 * Message search printed for a trigram index (src/sql/postgres/search.ts): each new form must
 * answer exactly as the one it replaced. The equivalences are checked on Postgres itself, with
 * the texts that make LIKE and case folding differ (`%`, `_`, `\`, quotes, letters whose lower
 * case is another script's), then through the translator.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { escapeLike } from '../../src/sql/postgres/search.js';
import { testDatabase } from '../support/db.js';
import { expectTranslation, runTranslation } from '../support/translation.js';

/** Characters that LIKE, quoting or case folding treat specially, and a few plain ones. */
const TRICKY = ['a', 'b', 'A', '%', '_', '\\', "'", 'K', 'k', '\u212a', 'İ', 'i', 'ı', 'I', 'ß', 'ẞ', 'Σ', 'σ', 'ς', 'é', 'É', '/', ' '];
const trickyText = fc.array(fc.constantFrom(...TRICKY), { maxLength: 6 }).map((cs) => cs.join(''));

describe('search forms a trigram index serves', function () {
  this.timeout(60_000);

  it('when a needle is escaped for LIKE, then LIKE finds exactly the texts strpos finds', async () => {
    const { pool } = await testDatabase();
    await fc.assert(
      fc.asyncProperty(fc.array(trickyText, { minLength: 1, maxLength: 20 }), trickyText, async (texts, needle) => {
        const { rows } = await pool.query<{ t: string; like: boolean; strpos: boolean }>(
          `SELECT t, t LIKE $2 AS like, strpos(t, $3) > 0 AS strpos FROM unnest($1::text[]) AS t`,
          [texts, `%${escapeLike(needle)}%`, needle],
        );
        for (const r of rows) assert.equal(r.like, r.strpos, `${JSON.stringify(r.t)} ∋ ${JSON.stringify(needle)}`);
      }),
      { numRuns: 60 },
    );
  });

  it('when a pattern has no capital and is ASCII, then ILIKE answers as lower(x) LIKE on this database', async () => {
    const { pool } = await testDatabase();
    const folded = fc.array(fc.constantFrom('k', 'i', 's', 'ss', 'a', '%', '_', '\\%', ' '), { maxLength: 4 }).map((cs) => cs.join(''));
    await fc.assert(
      fc.asyncProperty(fc.array(trickyText, { minLength: 1, maxLength: 20 }), folded, async (texts, pattern) => {
        const { rows } = await pool.query<{ t: string; lowered: boolean; ilike: boolean }>(
          `SELECT t, lower(t) LIKE $2 AS lowered, t ILIKE $2 AS ilike FROM unnest($1::text[]) AS t`,
          [texts, pattern],
        );
        for (const r of rows) assert.equal(r.ilike, r.lowered, `${JSON.stringify(r.t)} ILIKE ${JSON.stringify(pattern)}`);
      }),
      { numRuns: 60 },
    );
  });

  it('when regexp_contains has a literal without metacharacters, then it is printed as LIKE and finds % _ and quotes as text', async () => {
    const { rows, translation: t } = await runTranslation(
      `select t, regexp_contains(t, '50%_off') as a, regexp_contains(t, 'it''s') as b, regexp_contains(t, '') as c
         from unnest(['50%_off', '50x_off', '5000 off', 'it''s', 'its', cast(null as string)]) as t`,
    );
    const byText = (r: Record<string, unknown>) => String(r.t);
    assert.deepEqual(
      [...rows].sort((x, y) => byText(x).localeCompare(byText(y))),
      [
        { t: '5000 off', a: false, b: false, c: true },
        { t: '50%_off', a: true, b: false, c: true },
        { t: '50x_off', a: false, b: false, c: true },
        { t: "it's", a: false, b: true, c: true },
        { t: 'its', a: false, b: false, c: true },
        { t: null, a: null, b: null, c: null },
      ].sort((x, y) => byText(x).localeCompare(byText(y))),
    );
    assert.match(t.sql, /LIKE '%50\\%\\_off%'/);
    assert.doesNotMatch(t.sql, /strpos/);
  });

  it('when regexp_contains has a parameter, then a plain value is found as text with % _ and \\ taken literally', async () => {
    const texts = ['a%b', 'axb', 'a_b', 'a\\b', 'ab'];
    for (const [value, expected] of [
      ['%', ['a%b']],
      ['_', ['a_b']],
      ['a%b', ['a%b']],
      ['', texts],
    ] as const) {
      const { rows, translation } = await runTranslation(
        `select t from unnest(['a%b', 'axb', 'a_b', 'a\\\\b', 'ab']) as t where regexp_contains(t, @p)`,
        { params: { p: value } },
      );
      assert.deepEqual(rows.map((r) => r.t).sort(), [...expected].sort(), value);
      assert.match(translation.sql, /LIKE/);
    }
  });

  it('when lower(x) is compared with LIKE to a lower-case literal, then it is printed as ILIKE with the same rows', async () => {
    const found = async (pattern: string) => {
      const { rows, translation } = await runTranslation(
        `select t from unnest(['GET /Rest/v1', 'get /rest/v1', 'POST /auth', '\u212aelvin', 'İstanbul', cast(null as string)]) as t
          where lower(t) like '${pattern}'`,
      );
      return { texts: rows.map((r) => r.t).sort(), sql: translation.sql };
    };
    const rest = await found('%rest%');
    assert.deepEqual(rest.texts, ['GET /Rest/v1', 'get /rest/v1'].sort());
    assert.match(rest.sql, /ILIKE '%rest%'/);
    assert.deepEqual((await found('%kelvin%')).texts, ['\u212aelvin']);
    // A capital in the pattern can never match lower(x): it stays as written (and finds nothing).
    const capital = await found('%Rest%');
    assert.deepEqual(capital.texts, []);
    assert.doesNotMatch(capital.sql, /ILIKE/);
    const negated = await expectTranslation(
      `select t from unnest(['GET /Rest', 'POST /auth']) as t where lower(t) not like '%rest%'`,
    ).toReturn([{ t: 'POST /auth' }]);
    assert.match(negated.sql, /NOT ILIKE/);
  });
});
