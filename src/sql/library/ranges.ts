/**
 * BigQuery's range functions (its reference, "Range functions"; GoogleSQL's range-functions.md)
 * over RANGE<DATE>, RANGE<DATETIME> and RANGE<TIMESTAMP>, held as Postgres `daterange` / `tsrange`
 * / `tstzrange` with `[)` bounds: an unbounded bound is an infinite one, so RANGE_START /
 * RANGE_END of it are NULL, RANGE_CONTAINS / RANGE_OVERLAPS are Postgres' `@>` / `&&` (called by
 * their function names, wall 2 allows no range operator), and ranges compare, group and order as
 * BigQuery's do (lower bounds first, an unbounded lower bound first, an unbounded upper bound
 * last). What Postgres answers otherwise is BigQuery's error here: equal bounds
 * (`logs.bq_range`), ranges that do not overlap for RANGE_INTERSECT
 * (migrations/1764880000000_bigquery-range-functions.js); `SAFE.` makes both NULL.
 *
 * Types are checked while translating: a function given a value of another type, two ranges of
 * different element types, or a step GENERATE_RANGE_ARRAY does not take is a 400 naming it.
 */
import { RANGE_BOUND_TYPES, RANGE_FUNCTION, adapt, asTimestamp, stringToRange } from '../coerce.js';
import { SqlSyntaxError } from '../errors.js';
import type { CallSite, FunctionDef } from '../functions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { PARTIAL, PARTIAL_STRICT, TOTAL_STRICT } from '../postgres/facts.js';
import { BOOL, isScalar, rangeElement, rangeOf, scalar, typed, type RangeElement, type Typed } from '../types.js';
import { def, defWith, safeWhereTotal, wrongType } from './define.js';

const INTERSECT_FUNCTION = 'logs.bq_range_intersect';
const RANGE_ARRAY_FUNCTION = 'logs.bq_range_array';

/** A value that may stand for any type: a parameter (bound as text), an untyped JSON leaf. */
const loose = (v: Typed): boolean => v.param === true || (v.type.kind === 'scalar' && v.type.loose === true);

/** The i-th argument, a RANGE; `like` gives a string literal or a parameter the other range's type. */
function rangeArg(s: CallSite, i: number, like?: RangeElement): { sql: PgExpr; element: RangeElement } {
  const v = s.arg(i);
  const element = rangeElement(v.type);
  if (element) return { sql: v.sql, element };
  if (like && isScalar(v.type, 'NULL')) return { sql: nullRange(like), element: like };
  if (like && ((v.literal !== undefined && isScalar(v.type, 'STRING')) || loose(v)))
    return { sql: stringToRange(v, like, false, s.text, s.call.args[i].pos), element: like };
  return wrongType(s, i, 'RANGE');
}

const nullRange = (element: RangeElement): PgExpr => pg.cast(pg.literal(null), rangeType(element));
const rangeType = (element: RangeElement): 'daterange' | 'tsrange' | 'tstzrange' =>
  element === 'DATE' ? 'daterange' : element === 'DATETIME' ? 'tsrange' : 'tstzrange';

/** Two ranges of one element type (BigQuery: `T must be of the same type for all inputs`). */
function rangePair(s: CallSite): [PgExpr, PgExpr, RangeElement] {
  const firstTyped = rangeElement(s.arg(0).type) !== undefined || rangeElement(s.arg(1).type) === undefined;
  const [i, j] = firstTyped ? [0, 1] : [1, 0];
  const a = rangeArg(s, i);
  const b = rangeArg(s, j, a.element);
  if (a.element !== b.element)
    throw new SqlSyntaxError(
      `${s.call.name.toUpperCase()} needs two ranges of one type, not RANGE<${a.element}> and RANGE<${b.element}>`,
      s.text,
      s.call.args[j].pos,
    );
  return firstTyped ? [a.sql, b.sql, a.element] : [b.sql, a.sql, a.element];
}

/** The i-th argument as a value of a range's element type: that type, NULL, or text read as one (a literal, a parameter). */
function elementArg(s: CallSite, i: number, element: RangeElement): PgExpr {
  const v = s.arg(i);
  if (isScalar(v.type, element)) return v.sql;
  if (isScalar(v.type, 'NULL')) return pg.cast(v.sql, RANGE_BOUND_TYPES[element]);
  if ((v.literal !== undefined && isScalar(v.type, 'STRING')) || loose(v)) {
    if (element === 'TIMESTAMP') return asTimestamp(typed(v.sql, scalar('STRING'), { literal: v.literal, param: v.param }));
    return adapt(typed(v.sql, v.type, { param: true }), scalar(element)).sql;
  }
  return wrongType(s, i, element);
}

/** RANGE(lower, upper): bounds of one type, DATE, DATETIME or TIMESTAMP; a NULL bound is unbounded. */
function construct(safe: boolean) {
  return (s: CallSite): Typed => {
    const typedAt = [0, 1].find((i) => rangeElementOfBound(s.arg(i)) !== undefined);
    if (typedAt === undefined) {
      const bad = [0, 1].find((i) => !isScalar(s.arg(i).type, 'NULL', 'STRING') && !loose(s.arg(i))) ?? 0;
      return wrongType(s, bad, 'DATE, DATETIME or TIMESTAMP');
    }
    const element = rangeElementOfBound(s.arg(typedAt))!;
    const other = 1 - typedAt;
    const otherElement = rangeElementOfBound(s.arg(other));
    if (otherElement !== undefined && otherElement !== element)
      throw new SqlSyntaxError(
        `RANGE needs bounds of one type, not ${typedAt === 0 ? element : otherElement} and ${typedAt === 0 ? otherElement : element}`,
        s.text,
        s.call.args[other].pos,
      );
    const bounds = [elementArg(s, 0, element), elementArg(s, 1, element)];
    return typed(pg.func(RANGE_FUNCTION, [...bounds, pg.literal(safe)]), rangeOf(element));
  };
}

function rangeElementOfBound(v: Typed): RangeElement | undefined {
  return isScalar(v.type, 'DATE')
    ? 'DATE'
    : isScalar(v.type, 'DATETIME')
      ? 'DATETIME'
      : isScalar(v.type, 'TIMESTAMP')
        ? 'TIMESTAMP'
        : undefined;
}

/** RANGE_START / RANGE_END: Postgres' lower / upper, NULL for an unbounded bound as in BigQuery. */
function bound(name: 'lower' | 'upper'): FunctionDef {
  return def(1, 1, { [name]: TOTAL_STRICT }, (s) => {
    const r = rangeArg(s, 0);
    return typed(pg.func(name, [r.sql]), scalar(r.element));
  });
}

/** RANGE_INTERSECT, NULL instead of BigQuery's error under `SAFE.`. */
function intersect(safe: boolean) {
  return (s: CallSite): Typed => {
    const [a, b, element] = rangePair(s);
    return typed(pg.func(INTERSECT_FUNCTION, [a, b, pg.literal(safe)]), rangeOf(element));
  };
}

/** The parts GENERATE_RANGE_ARRAY steps by, per element type (BigQuery's reference). */
const STEP_PARTS: Readonly<Record<RangeElement, readonly string[]>> = {
  DATE: ['YEAR', 'QUARTER', 'MONTH', 'WEEK', 'DAY'],
  DATETIME: ['YEAR', 'QUARTER', 'MONTH', 'WEEK', 'DAY', 'HOUR', 'MINUTE', 'SECOND'],
  TIMESTAMP: ['DAY', 'HOUR', 'MINUTE', 'SECOND'],
};

function generateRangeArray(s: CallSite): Typed {
  const r = rangeArg(s, 0);
  const step = s.arg(1);
  if (!isScalar(step.type, 'INTERVAL')) return wrongType(s, 1, 'INTERVAL');
  const written = s.call.args[1];
  if (written.kind === 'interval') {
    const parts = STEP_PARTS[r.element];
    if (written.toUnit !== undefined || !parts.includes(written.unit))
      throw new SqlSyntaxError(
        `GENERATE_RANGE_ARRAY of a RANGE<${r.element}> steps by one of ${parts.join(', ')}, not ${written.unit}${written.toUnit ? ` TO ${written.toUnit}` : ''}`,
        s.text,
        written.pos,
      );
  }
  let includeLast: PgExpr = pg.literal(true);
  if (s.call.args.length > 2) {
    const v = s.arg(2);
    if (!isScalar(v.type, 'BOOL', 'NULL') && !loose(v)) return wrongType(s, 2, 'BOOL');
    includeLast = adapt(v, BOOL).sql;
  }
  return typed(pg.func(RANGE_ARRAY_FUNCTION, [r.sql, step.sql, includeLast]), { kind: 'array', element: rangeOf(r.element) });
}

/**
 * The functions a RANGE may be given to: the range functions, and those BigQuery defines for any
 * value (conditionals, COUNT, MIN / MAX, ARRAY_AGG, navigation, TO_JSON, FORMAT's `%t`). Any other
 * is a 400 naming it (resolve/expressions.ts), not a Postgres error about `daterange`.
 */
export const TAKES_RANGES: ReadonlySet<string> = new Set([
  'range_start',
  'range_end',
  'range_contains',
  'range_overlaps',
  'range_intersect',
  'generate_range_array',
  'count',
  'min',
  'max',
  'any_value',
  'array_agg',
  'approx_count_distinct',
  'min_by',
  'max_by',
  'coalesce',
  'ifnull',
  'if',
  'nullif',
  'greatest',
  'least',
  'lag',
  'lead',
  'first_value',
  'last_value',
  'nth_value',
  'array_includes',
  'to_json',
  'to_json_string',
  'json_array',
  'json_object',
  'format',
]);

export const RANGE_FUNCTIONS: Readonly<Record<string, FunctionDef>> = safeWhereTotal({
  range: defWith(def(2, 2, { [RANGE_FUNCTION]: PARTIAL }, construct(false)), { safe: construct(true) }),
  range_start: bound('lower'),
  range_end: bound('upper'),
  // Signature 1: a range in a range (`@>`); signature 2: a value in a range.
  range_contains: def(2, 2, { range_contains: TOTAL_STRICT, range_contains_elem: TOTAL_STRICT }, (s) => {
    const r = rangeArg(s, 0);
    const v = s.arg(1);
    const literalRange = v.literal !== undefined && isScalar(v.type, 'STRING') && v.literal.startsWith('[');
    if (rangeElement(v.type) || literalRange) {
      const inner = rangeArg(s, 1, r.element);
      if (inner.element !== r.element)
        throw new SqlSyntaxError(
          `RANGE_CONTAINS needs two ranges of one type, not RANGE<${r.element}> and RANGE<${inner.element}>`,
          s.text,
          s.call.args[1].pos,
        );
      return typed(pg.func('range_contains', [r.sql, inner.sql]), BOOL);
    }
    return typed(pg.func('range_contains_elem', [r.sql, elementArg(s, 1, r.element)]), BOOL);
  }),
  range_overlaps: def(2, 2, { range_overlaps: TOTAL_STRICT }, (s) => {
    const [a, b] = rangePair(s);
    return typed(pg.func('range_overlaps', [a, b]), BOOL);
  }),
  range_intersect: defWith(def(2, 2, { [INTERSECT_FUNCTION]: PARTIAL_STRICT }, intersect(false)), { safe: intersect(true) }),
  generate_range_array: def(2, 3, { [RANGE_ARRAY_FUNCTION]: PARTIAL_STRICT }, generateRangeArray),
});
