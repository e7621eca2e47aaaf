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
 * (searchHours.ts), so the open day's hourly partial indexes serve it too.
 *
 * Measured with and without the index: BENCHMARKS.md, "Search".
 */
import { pg, type PgExpr } from './ast.js';

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
