/**
 * Message search printed in forms a trigram index can serve (src/storage/searchIndexes.ts).
 *
 * A `pg_trgm` GIN index answers `LIKE`, `ILIKE`, `~` and `~*`, never `strpos(…) > 0` nor
 * `lower(x) LIKE …`, so the builders of containment tests and of LIKE print them through here:
 *
 *   regexp_contains(m, 'needle')     →  (m LIKE '%needle%')            (was strpos(m, 'needle') > 0)
 *   regexp_contains(m, @p)           →  CASE WHEN $1 ~ '<meta>' THEN m ~ $1
 *                                        ELSE m LIKE ('%' || <$1 escaped> || '%') END
 *   lower(m) LIKE '%needle%'         →  (m ILIKE '%needle%')            (pattern without A–Z, ASCII)
 *
 * Each form is exactly the one it replaces (test/sql/search.test.ts runs both on Postgres):
 *
 * - `strpos(x, n) > 0` ⇔ `x LIKE '%' || esc(n) || '%'`, where esc puts a backslash (LIKE's default
 *   escape character) before `\`, `%` and `_`: the pattern then matches any text holding `n` as a
 *   substring. NULL in, NULL out, as strpos; an empty `n` matches every text, as strpos (1 > 0).
 * - `lower(x) LIKE p` ⇔ `x ILIKE p` when `lower(p) = p`: Postgres' ILIKE on a multibyte
 *   database (UTF-8, the only encoding the service creates) is `lower(x) LIKE lower(p)` with the
 *   same collation (Postgres' Generic_Text_IC_like, in like.c). `lower(p) = p` is sure
 *   only for a pattern of ASCII characters without capitals, so only such literals are rewritten.
 * - A parameter's escaping is folded by the planner: the query is an unnamed statement planned
 *   with its values, `replace` and `||` are immutable, so the index sees one constant pattern.
 *
 * A query holding one of these forms also gets its log tables' scans split by the search hours
 * (searchHours.ts), so the open day's hourly partial indexes serve it too; not when the needle
 * is a word in most messages or has no trigram (`indexServes`): no index serves that better than
 * the scan.
 *
 * A needle with a common part (a trigram in most messages: the table's common trigrams, measured
 * by src/storage/commonTrigrams.ts, catalog.ts `SourceTable.commonTrigrams`) makes the GIN scan
 * read that trigram's whole posting list. `searchForIndexes` gives the index only the needle's
 * longest part whose trigrams are all rare (trigrams.ts) and keeps the exact test where no index
 * can take it, as a recheck of the rows found:
 *
 *   m LIKE '%<needle>%'   →  (m LIKE '%<rare part>%' AND (m || '') LIKE '%<needle>%')
 *
 * A LIKE needle whose trigrams are all common (a word in most messages), or that has none (under
 * three alphanumerics), on a column with measured common trigrams has no rare part: it is
 * printed `strpos(m, 'needle') > 0` (the needle with LIKE's escapes undone), the form before this module, which no index serves and whose
 * selectivity the planner takes for a third of the rows, so it walks the newest rows first and
 * stops at the query's LIMIT (a bitmap of such a needle reads whole posting lists, from the oldest
 * day; printed `(m || '') LIKE`, the planner took it for rare: 388 ms against 2.9 ms).
 *
 * The same rows: the rare part is a substring of the needle, so every text holding the needle
 * holds it (the first test never drops a row the second keeps), NULL gives NULL either way, and
 * `m || ''` is `m`. The index is on `m`, not on `m || ''`, so the planner leaves the second test
 * to the heap rows. ILIKE too when the needle is ASCII (lower() is then per character, so the
 * lowered rare part is a substring of the lowered needle).
 *
 * A column whose common trigrams are frozen has rare-trigram indexes instead (GIN on
 * `fn(column)`, its trigrams less the common ones: src/storage/searchIndexes.ts), which serve no
 * LIKE or regex themselves: each search test on it gets `AND fn(column) @> ARRAY[…]`, the
 * trigrams every match holds (`rareIndexTest`), which they serve. The rare-part form above stays
 * for the days whose plain index an upgrade has not rebuilt yet.
 *
 * Measured with and without the index: BENCHMARKS.md, "Search".
 */
import { mapNodes, forEachNode } from '../walk.js';
import { pg, type PgColumn, type PgDerived, type PgExpr, type PgOp, type PgQuery, type PgTable } from './ast.js';
import { SEARCH_ASCII_WORDS, SEARCH_INNER_TRIGRAMS } from '../catalog.js';
import { regexLiterals, regexOptions } from './regexLiterals.js';
import { allCommon, containedTrigrams, likeLiterals, rarePart } from './trigrams.js';

/** `x LIKE '%n%'` for a literal needle `n`: true where `x` holds `n`, as `strpos(x, n) > 0`. */
export function containsLiteral(text: PgExpr, needle: string): PgExpr {
  return pg.op('LIKE', text, pg.literal(`%${escapeLike(needle)}%`));
}

/** The same for a needle known only when the query runs (a parameter, a column). */
export function containsValue(text: PgExpr, needle: PgExpr): PgExpr {
  let escaped = needle;
  for (const c of LIKE_SPECIAL) escaped = pg.func('replace', [escaped, pg.literal(c), pg.literal('\\' + c)]);
  return pg.op('LIKE', text, pg.op('||', pg.op('||', pg.literal('%'), escaped), pg.literal('%')));
}

/**
 * `value [NOT] LIKE pattern`, with `lower(x) LIKE 'p'` printed as `x ILIKE 'p'` where that is
 * the same test (see above); anything else as written.
 */
export function likeTest(value: PgExpr, pattern: PgExpr, negated: boolean): PgExpr {
  if (value.kind === 'func' && value.name === 'lower' && value.args.length === 1 && !value.over && isFoldedLiteral(pattern))
    return pg.op(negated ? 'NOT ILIKE' : 'ILIKE', value.args[0], pattern);
  return pg.op(negated ? 'NOT LIKE' : 'LIKE', value, pattern);
}

/** The characters LIKE gives a meaning to, the escape character first (it is escaped before the others are). */
const LIKE_SPECIAL = ['\\', '%', '_'] as const;

/** `needle` as a LIKE pattern matching exactly that text. */
export function escapeLike(needle: string): string {
  return needle.replace(/[\\%_]/g, (c) => '\\' + c);
}

/** A string literal that `lower` leaves as it is under any collation: ASCII without capitals. */
function isFoldedLiteral(pattern: PgExpr): boolean {
  if (pattern.kind !== 'literal' || typeof pattern.value !== 'string') return false;
  for (let i = 0; i < pattern.value.length; i++) {
    const c = pattern.value.charCodeAt(i);
    if (c > 0x7f || (c >= 0x41 && c <= 0x5a)) return false;
  }
  return true;
}

/** The common trigrams of a log table read under an alias, by column (catalog.ts `SourceTable.commonTrigrams`). */
export type CommonTrigramsByAlias = ReadonlyMap<string, Readonly<Record<string, readonly string[]>>>;
/** The rare-trigram index functions of a log table read under an alias, by column (catalog.ts `SourceTable.rareTrigramIndexes`). */
export type RareTrigramIndexesByAlias = ReadonlyMap<string, Readonly<Record<string, string>>>;

/**
 * `query` with each `column [I]LIKE '%needle%'` of a column with common trigrams printed as above
 * (as it is without them), each search test of a column with a rare-trigram index given that
 * index's test (below), and which of its search tests an index serves (`indexServes`, for the hour
 * split: searchHours.ts). The rewrite keeps every alias, so one reading of the columns' facts
 * serves both.
 */
export function searchForIndexes(
  query: PgQuery,
  common: CommonTrigramsByAlias,
  rareIndexes: RareTrigramIndexesByAlias = new Map(),
): { query: PgQuery; indexServes: (op: PgOp) => boolean } {
  if (!common.size && !rareIndexes.size) return { query, indexServes: indexServes(() => ({})) };
  const facts = factsOfColumns(query, common, rareIndexes);
  return { query: rewrite(query, facts), indexServes: indexServes(facts) };
}

/** The operators of a search test: what a trigram index serves (and the hour split looks for: searchHours.ts). */
export const SEARCH_OPERATORS: ReadonlySet<string> = new Set(['LIKE', 'ILIKE', '~', '~*']);
const NO_TRIGRAMS: ReadonlySet<string> = new Set();

function rewrite(query: PgQuery, factsOf: FactsOf): PgQuery {
  return mapNodes(query, (n) => {
    if (n.kind !== 'op' || !SEARCH_OPERATORS.has((n as unknown as PgOp).op)) return n;
    const op = n as unknown as PgOp;
    if (op.left.kind !== 'column') return n;
    const { common, rareIndex } = factsOf(op.left);
    const needle = literalNeedle(op);
    // A word in most messages: the scan's own form, which no index serves (above).
    if (needle !== undefined && common && op.op === 'LIKE' && allCommon(needle, common))
      return pg.op('>', pg.func('strpos', [op.left, pg.literal(needle)]), pg.number('0'));
    const printed = needle !== undefined && common ? rarePartOf(op, needle, common) : op;
    // The function leaves out the column's frozen common trigrams: without them, what to ask is unknown.
    const asked = rareIndex && common && rareIndexTest(op, rareIndex, common);
    return asked ? pg.and(printed, asked) : printed;
  });
}

/** A literal needle's test with its rare part given to a `gin_trgm_ops` index (above); the test as it is when it has none. */
function rarePartOf(op: PgOp, needle: string, common: ReadonlySet<string>): PgExpr {
  const part = rarePart(needle, common);
  if (part === undefined) return op;
  const hidden = pg.op('||', op.left, pg.literal(''));
  return pg.and(pg.op(op.op, op.left, pg.literal(`%${escapeLike(part)}%`)), pg.op(op.op, hidden, op.right));
}

/**
 * What a column's rare-trigram index (src/storage/searchIndexes.ts: GIN on `fn(column)`, the
 * column's trigrams less its frozen common ones) is asked for a search test: a condition every
 * row the test keeps meets, so `test AND condition` is the test (NULL where it is NULL), which
 * the index serves; undefined when it would ask for nothing.
 *
 * - A literal pattern (LIKE, ILIKE) or regex (`~`, `~*`): the texts any match holds
 *   (trigrams.ts likeLiterals, regexLiterals.ts), their trigrams (containedTrigrams) less the
 *   common ones: `fn(column) @> ARRAY['abc', …]`. pg_trgm's trigrams are lowercased on both
 *   sides, so the case-insensitive forms ask the same.
 * - A pattern known only when the query runs (a parameter's LIKE: containsValue above): the same
 *   computed by Postgres from the pattern's ASCII words (`logs.search_ascii_words`: any other
 *   character, `%`, `_` and `\` included, parts words and only shortens them; a trigram with a
 *   character outside ASCII is hashed by pg_trgm), their trigrams without a space (a word's inner
 *   ones, which any text holding the word has, whatever is around it):
 *   `(cardinality(N) = 0 OR fn(column) @> N)` with
 *   `N = logs.search_inner_trigrams(fn(logs.search_ascii_words(pattern)))`. The query is planned
 *   with its values and the functions are IMMUTABLE, so the planner folds N to a constant and the
 *   OR to one side.
 */
function rareIndexTest(op: PgOp, fn: string, common: ReadonlySet<string>): PgExpr | undefined {
  const indexed = pg.func(fn, [op.left]);
  if (op.right.kind === 'literal' && typeof op.right.value === 'string') {
    const pattern = op.right.value;
    const runs = op.op === 'LIKE' || op.op === 'ILIKE' ? likeLiterals(pattern) : regexLiterals(pattern);
    // A case-insensitive regex (ILIKE folds case as pg_trgm does, by the locale: not one of these).
    const anyCase = op.op === '~*' || regexOptions(pattern).flags.includes('i');
    const trigrams = new Set<string>();
    for (const run of runs ?? []) for (const t of containedTrigrams(run, anyCase)) if (!common.has(t)) trigrams.add(t);
    if (!trigrams.size) return undefined;
    return pg.op('@>', indexed, pg.array([...trigrams].sort().map((t) => pg.literal(t))));
  }
  if (op.op !== 'LIKE' && op.op !== 'ILIKE') return undefined;
  const needed = pg.func(SEARCH_INNER_TRIGRAMS, [pg.func(fn, [pg.func(SEARCH_ASCII_WORDS, [op.right])])]);
  return pg.or(pg.op('=', pg.func('cardinality', [needed]), pg.number('0')), pg.op('@>', indexed, needed));
}

/**
 * Whether a trigram index serves a search test better than the scan the explorer's newest-first
 * LIMIT makes: false for `column [I]LIKE '%needle%'` whose needle has no trigram (shorter than
 * three alphanumerics: the index would be read whole) or only common ones (a word in most
 * messages: the bitmap reads whole posting lists, from the oldest day, where the scan stops at its
 * LIMIT after a few pages); true for any other test (a parameter, a pattern, a regex, a needle
 * outside ASCII). Only the choice of the hour split hangs on it: such a LIKE is printed as strpos
 * (above), an ILIKE as it is, on the column the planner keeps statistics of.
 */
function indexServes(factsOf: FactsOf): (op: PgOp) => boolean {
  return (op) => {
    const needle = literalNeedle(op);
    return needle === undefined || !allCommon(needle, factsOf(op.left as PgColumn).common ?? NO_TRIGRAMS);
  };
}

/** The search facts of a column as the query reads it: its common trigrams, its rare-trigram index's function; empty when none are known. */
type FactsOf = (column: PgColumn) => { common?: ReadonlySet<string>; rareIndex?: string };

/** The needle of `column [I]LIKE '%needle%'` (a literal pattern, no wildcard inside); undefined for any other test. */
function literalNeedle(op: PgOp): string | undefined {
  if ((op.op !== 'LIKE' && op.op !== 'ILIKE') || op.left.kind !== 'column' || op.left.table === undefined) return undefined;
  if (op.right.kind !== 'literal' || typeof op.right.value !== 'string') return undefined;
  return containedNeedle(op.right.value);
}

/**
 * The search facts of a column as `query` reads it: a log table's, or a CTE's or subquery's
 * column passing a log table's column through (the logs explorer's queries search `edge_logs`, a
 * CTE over the edge table). Reaching the wrong table's facts could only cost speed: every use is
 * exact whatever the set, and a rare-trigram function is asked of the column it was reached from,
 * whose rows are the table's.
 */
function factsOfColumns(query: PgQuery, common: CommonTrigramsByAlias, rareIndexes: RareTrigramIndexesByAlias): FactsOf {
  const tables = new Set<string>();
  const ctes = new Map<string, PgQuery>();
  const reads = new Map<string, PgQuery>();
  forEachNode(query, (n) => {
    if (n.kind === 'query') for (const c of (n as unknown as PgQuery).ctes) ctes.set(c.name, c.query);
    if (n.kind === 'derived') reads.set((n as unknown as PgDerived).alias, (n as unknown as PgDerived).query);
  });
  forEachNode(query, (n) => {
    if (n.kind !== 'table') return;
    const t = n as unknown as PgTable;
    if (t.schema !== undefined) tables.add(t.alias);
    else if (ctes.has(t.name)) reads.set(t.alias, ctes.get(t.name)!);
  });
  /** The log table's alias and column a column passes through, if it does. */
  const baseOf = (alias: string, column: string, depth = 0): { alias: string; column: string } | undefined => {
    if (tables.has(alias)) return { alias, column };
    const body = reads.get(alias)?.body;
    if (depth > 8 || body?.kind !== 'select') return undefined;
    const target = body.targets.find((t) => t.name === column)?.expr;
    return target?.kind === 'column' && target.table !== undefined ? baseOf(target.table, target.name, depth + 1) : undefined;
  };
  const sets = new Map<readonly string[], Set<string>>();
  return (column) => {
    const base = column.table === undefined ? undefined : baseOf(column.table, column.name);
    if (!base) return {};
    const list = common.get(base.alias)?.[base.column];
    const rareIndex = rareIndexes.get(base.alias)?.[base.column];
    let set = list?.length ? sets.get(list) : undefined;
    if (list?.length && !set) sets.set(list, (set = new Set(list)));
    return { ...(set && { common: set }), ...(rareIndex && { rareIndex }) };
  };
}

/** The text `pattern` tests containment of when it is `%…%` with no wildcard inside (escapes undone); else undefined. */
export function containedNeedle(pattern: string): string | undefined {
  if (pattern.length < 2 || pattern[0] !== '%' || pattern[pattern.length - 1] !== '%') return undefined;
  let needle = '';
  for (let i = 1; i < pattern.length - 1; i++) {
    const c = pattern[i];
    if (c === '%' || c === '_') return undefined;
    if (c === '\\') {
      // The last `%` escaped: the pattern does not end with a wildcard.
      if (i + 1 >= pattern.length - 1) return undefined;
      needle += pattern[++i];
    } else needle += c;
  }
  return needle;
}
