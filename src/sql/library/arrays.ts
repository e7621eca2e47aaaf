/**
 * Array functions over Postgres arrays (literals, ARRAY_AGG, SPLIT, GENERATE_ARRAY, …) and, where
 * they read only scalars, over JSON arrays of a source's events (`metadata.tags`). NULL handling is
 * BigQuery's: a NULL array gives NULL; ARRAY_FIRST / ARRAY_LAST of an empty array fail, as
 * `arr[OFFSET(i)]` out of range does (`logs.bq_array_offset`,
 * migrations/1764200000000_bigquery-library-functions.js).
 */
import { adapt, asNumber, asText, unify, unifyAll } from '../coerce.js';
import { SqlSyntaxError } from '../errors.js';
import type { CallSite, FunctionDef } from '../functions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { PARTIAL_STRICT, SCALAR, TOTAL, TOTAL_STRICT, scalar as scalarFacts } from '../postgres/facts.js';
import { BOOL, FLOAT64, INT64, STRING, isScalar, rangeElement, typeName, typed, type BqType, type Typed } from '../types.js';
import { def, refuseHugeArray } from './define.js';

/** `arr[OFFSET(i)]` that fails out of range, as in BigQuery (SAFE_OFFSET is a plain subscript). */
export const ARRAY_OFFSET = 'logs.bq_array_offset';
const JSON_SCALAR_ARRAY = 'logs.bq_json_scalar_array';
const STRICT_PARTIAL = PARTIAL_STRICT;

/** The i-th argument as a Postgres array: JSON arrays of scalars are read as text[]. */
function anArray(site: CallSite, i: number, jsonToo: boolean): { sql: PgExpr; element: BqType } {
  const v = site.arg(i);
  if (v.type.kind === 'array') return { sql: v.sql, element: v.type.element };
  if (jsonToo && v.type.kind === 'jsonArray' && v.type.element.kind === 'scalar')
    return { sql: pg.func(JSON_SCALAR_ARRAY, [v.sql]), element: STRING };
  throw new SqlSyntaxError(
    `${site.call.name.toUpperCase()} needs an array of scalar values, got ${v.type.kind === 'scalar' ? v.type.name : 'an array of records'}`,
    site.text,
    site.call.args[i].pos,
  );
}

const arrayOf = (element: BqType): BqType => ({ kind: 'array', element });

/** `arr[i]` (0-based) that fails out of range. */
export function offsetOf(array: PgExpr, zeroBased: PgExpr): PgExpr {
  return pg.func(ARRAY_OFFSET, [array, zeroBased]);
}

/** An array of ranges where a function takes none (Postgres has no max of ranges; their text is not BigQuery's): a 400. */
function refuseRanges(site: CallSite, array: { element: BqType }): void {
  if (rangeElement(array.element))
    throw new SqlSyntaxError(
      `${site.call.name.toUpperCase()} takes no array of ${typeName(array.element)}`,
      site.text,
      site.call.args[0].pos,
    );
}

/** ARRAY_MAX / ARRAY_MIN: the largest / smallest non-NULL element, in the element's type. */
function extreme(name: string): FunctionDef {
  return def(1, 1, { [name]: TOTAL_STRICT }, (s) => {
    const array = anArray(s, 0, false);
    refuseRanges(s, array);
    return typed(pg.func(name, [array.sql]), array.element);
  });
}

/** ARRAY_SUM (INT64 stays INT64) / ARRAY_AVG (FLOAT64) over the non-NULL elements. */
function numeric(name: string, average: boolean): FunctionDef {
  return def(1, 1, { [name]: STRICT_PARTIAL }, (s) => {
    const array = anArray(s, 0, false);
    if (!isScalar(array.element, 'INT64', 'FLOAT64', 'NUMERIC', 'NULL'))
      throw new SqlSyntaxError(`${s.call.name.toUpperCase()} needs an array of numbers`, s.text, s.call.args[0].pos);
    const integer = !average && isScalar(array.element, 'INT64', 'NULL');
    // Postgres picks the overload: bigint[] for INT64 sums, float8[] (an implicit array cast) otherwise.
    return typed(pg.func(name, [array.sql]), integer ? INT64 : FLOAT64);
  });
}

/** ARRAY_INCLUDES_ALL / ARRAY_INCLUDES_ANY (array, search values) of one element type. */
function includes(name: string): FunctionDef {
  return def(2, 2, { [name]: TOTAL_STRICT }, (s) => {
    const [array, search] = [anArray(s, 0, false), anArray(s, 1, false)];
    if (!isScalar(search.element, 'NULL') && !isScalar(array.element, 'NULL') && search.element !== array.element)
      throw new SqlSyntaxError(`${s.call.name.toUpperCase()} needs arrays of one element type`, s.text, s.call.args[1].pos);
    return typed(pg.func(name, [array.sql, search.sql]), BOOL);
  });
}

export const ARRAY_FUNCTIONS: Readonly<Record<string, FunctionDef>> = {
  // array_to_string skips NULL elements unless given a text for them: BigQuery's rule.
  array_to_string: def(2, 3, { array_to_string: TOTAL, [JSON_SCALAR_ARRAY]: TOTAL_STRICT }, (s) => {
    const array = anArray(s, 0, true);
    refuseRanges(s, array);
    const rest = [asText(s.arg(1)), ...(s.call.args.length > 2 ? [asText(s.arg(2))] : [])];
    return typed(pg.func('array_to_string', [array.sql, ...rest]), STRING);
  }),
  array_reverse: def(1, 1, { 'logs.bq_array_reverse': TOTAL_STRICT }, (s) => {
    const array = anArray(s, 0, false);
    return typed(pg.func('logs.bq_array_reverse', [array.sql]), arrayOf(array.element));
  }),
  // `a || b` skips a NULL array; BigQuery's ARRAY_CONCAT is NULL then.
  array_concat: def(1, 100, {}, (s) => {
    const arrays = s.call.args.map((_, i) => anArray(s, i, false));
    const element = arrays.find((a) => !isScalar(a.element, 'NULL'))?.element ?? INT64;
    const joined = arrays.map((a) => a.sql).reduce((a, b) => pg.op('||', a, b));
    const anyNull = pg.or(...arrays.map((a) => pg.is(a.sql, 'NULL')));
    return typed(pg.case([{ when: anyNull, then: pg.literal(null) }], joined), arrayOf(element));
  }),
  array_first: def(1, 1, { [ARRAY_OFFSET]: STRICT_PARTIAL }, (s) => {
    const array = anArray(s, 0, false);
    return typed(offsetOf(array.sql, pg.number('0')), array.element);
  }),
  array_last: def(1, 1, { [ARRAY_OFFSET]: STRICT_PARTIAL, cardinality: SCALAR }, (s) => {
    const array = anArray(s, 0, false);
    return typed(offsetOf(array.sql, pg.op('-', pg.func('cardinality', [array.sql]), pg.number('1'))), array.element);
  }),
  // NULL when the array or the value is NULL; else whether an element equals it (NULL elements never do).
  array_includes: def(2, 2, { coalesce: scalarFacts({ mayFail: false, syntax: true }), [JSON_SCALAR_ARRAY]: TOTAL_STRICT }, (s) => {
    const array = anArray(s, 0, true);
    // A string literal meets an array of ranges as a range (`unify`), anything else takes the element's type if it can.
    const v = rangeElement(array.element)
      ? unify(typed(array.sql, array.element), s.arg(1), s.text, s.call.args[1].pos)[1]
      : adapt(s.arg(1), array.element);
    const found = { kind: 'any' as const, operand: v.sql, array: array.sql, negated: false };
    return typed(
      pg.case(
        [{ when: pg.or(pg.is(v.sql, 'NULL'), pg.is(array.sql, 'NULL')), then: pg.literal(null) }],
        pg.func('coalesce', [found, pg.literal(false)]),
      ),
      BOOL,
    );
  }),
  array_slice: def(3, 3, { 'logs.bq_array_slice': TOTAL_STRICT }, (s) => {
    const array = anArray(s, 0, false);
    return typed(
      pg.func('logs.bq_array_slice', [array.sql, pg.cast(asNumber(s.arg(1)), 'bigint'), pg.cast(asNumber(s.arg(2)), 'bigint')]),
      arrayOf(array.element),
    );
  }),
  array_max: extreme('logs.bq_array_max'),
  array_min: extreme('logs.bq_array_min'),
  array_sum: numeric('logs.bq_array_sum', false),
  array_avg: numeric('logs.bq_array_avg', true),
  array_is_distinct: def(1, 1, { 'logs.bq_array_is_distinct': TOTAL_STRICT }, (s) =>
    typed(pg.func('logs.bq_array_is_distinct', [anArray(s, 0, false).sql]), BOOL),
  ),
  array_includes_all: includes('logs.bq_array_includes_all'),
  array_includes_any: includes('logs.bq_array_includes_any'),
  generate_array: def(2, 3, { 'logs.bq_generate_array': STRICT_PARTIAL }, (s) => {
    refuseHugeArray(s, 1);
    const values: Typed[] = [s.arg(0), s.arg(1), s.call.args.length > 2 ? s.arg(2) : typed(pg.number('1'), INT64)];
    const float = values.some((v) => isScalar(v.type, 'FLOAT64', 'NUMERIC'));
    const bad = values.findIndex(
      (v) => !v.param && !isScalar(v.type, 'INT64', 'FLOAT64', 'NUMERIC', 'NULL') && !(v.type.kind === 'scalar' && v.type.loose),
    );
    if (bad >= 0) throw new SqlSyntaxError('GENERATE_ARRAY takes numbers', s.text, s.call.args[bad].pos);
    const type = float ? 'float8' : 'bigint';
    return typed(
      pg.func(
        'logs.bq_generate_array',
        unifyAll(values).map((v) => pg.cast(v.sql, type)),
      ),
      arrayOf(float ? FLOAT64 : INT64),
    );
  }),
};
