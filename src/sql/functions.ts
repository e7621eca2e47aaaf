/**
 * The BigQuery function table: each allowed function name maps to a builder of Postgres nodes and
 * declares the Postgres functions that builder emits, with their facts (`emits`). It is wall 1's
 * allowlist (a name missing here is an unknown function, whatever Postgres has), and postgres/functions.ts
 * derives from it wall 2's allowlist and what the rewrites know about each Postgres function.
 *
 * Adding a function is one entry here and a test in test/sql/functions.test.ts.
 */
import { adapt, asNumber, asText, unifyAll } from './coerce.js';
import { SqlUnsupportedError } from './errors.js';
import type { Call } from './ast/expressions.js';
import { pg, type PgExpr, type PgOrder } from './postgres/ast.js';
import { AGGREGATE, ORDER_SENSITIVE_AGGREGATE, SCALAR, TOTAL, WINDOW_FUNCTION, aggregate, type PgFunctionFacts } from './postgres/facts.js';
import { BOOL, FLOAT64, INT64, STRING, isScalar, rangeElement, typed, type BqType, type Typed } from './types.js';
import { AGGREGATE_WINDOW, def, fn, windowCount, windowed } from './library/define.js';
import { AGGREGATE_FUNCTIONS } from './library/aggregates.js';
import { ARRAY_FUNCTIONS } from './library/arrays.js';
import { DATETIME_FUNCTIONS } from './library/datetime.js';
import { JSON_FUNCTIONS } from './library/json.js';
import { WINDOW_FUNCTIONS } from './library/windows.js';
import { CONDITIONAL_FUNCTIONS } from './library/conditional.js';
import { CONVERSION_FUNCTIONS } from './library/conversion.js';
import { HASH_FUNCTIONS } from './library/hash.js';
import { MATH_FUNCTIONS } from './library/math.js';
import { NET_FUNCTIONS } from './library/net.js';
import { RANGE_FUNCTIONS } from './library/ranges.js';
import { STRING_FUNCTIONS } from './library/strings.js';

/** What a builder can ask of the call being translated. */
export interface CallSite {
  readonly call: Call;
  readonly text: string;
  /** The i-th argument, resolved (and cached). */
  arg(i: number): Typed;
  /** The i-th argument written as a bare word (`hour` in `timestamp_trunc(ts, hour)`), upper-cased. */
  word(i: number): string;
  /** The i-th argument's value when it is a string literal. */
  stringLiteral(i: number): string | undefined;
  /** The i-th argument's value when it is an integer literal. */
  integerLiteral(i: number): number | undefined;
  /** An argument given as `name => value` where the function takes it by name only (`named`), resolved. */
  named(name: string): Typed | undefined;
  /** The call's `ORDER BY` (array_agg, string_agg), resolved. */
  orderBy(): PgOrder[];
}

/** Postgres functions a builder emits, by name, with their facts. */
export type Emits = Readonly<Record<string, PgFunctionFacts>>;

export interface FunctionDef {
  readonly min: number;
  readonly max: number;
  /**
   * Every Postgres function the builder writes with `pg.func` (those written by coerce.ts and the
   * AST helpers are postgres/functions.ts's). Wall 2 refuses any other, so a missing name fails the
   * function's test.
   */
  readonly emits: Emits;
  /** Aggregates may take DISTINCT / ORDER BY / LIMIT as listed; others take none. */
  readonly aggregate?: { readonly distinct?: boolean; readonly orderBy?: boolean };
  /** Takes `IGNORE NULLS` / `RESPECT NULLS` (the builder reads `call.nulls`); others refuse them. */
  readonly nulls?: boolean;
  /**
   * Use with `OVER (…)`: `function` (row_number, lag, …) must have it; `aggregate` may have it.
   * `orderBy` required means the window must have ORDER BY, forbidden that it must not
   * (PERCENTILE_CONT); `frame` whether a ROWS / RANGE frame is allowed (BigQuery refuses one for
   * numbering and lag / lead).
   */
  readonly window?: { readonly kind: 'function' | 'aggregate'; readonly orderBy?: 'required' | 'forbidden'; readonly frame: boolean };
  build(site: CallSite): Typed;
  /** Names of the arguments, in order, for `f(x, name => v)` (named arguments where BigQuery documents them). */
  readonly params?: readonly string[];
  /**
   * Arguments taken by name only, after a variable number of positional ones
   * (`JSON_SET(json, path, value, …, create_if_missing => FALSE)`); the builder reads them with `named`.
   */
  readonly named?: readonly string[];
  /**
   * `SAFE.f(…)`: `same` when the builder already answers NULL where BigQuery's f raises an error
   * (or f cannot raise one), else a builder that does. Without it, `SAFE.f` is refused.
   */
  readonly safe?: 'same' | ((site: CallSite) => Typed);
}

/** A window function of no arguments (`row_number()`, `rank()`, …). */
function numbering(name: string, type: BqType, orderBy?: 'required'): FunctionDef {
  return windowed(
    def(0, 0, { [name]: WINDOW_FUNCTION }, () => fn(name, [], type)),
    { kind: 'function', orderBy, frame: false },
  );
}

/** lag / lead: `(x[, offset[, default]])`; the default takes the value's type. */
function navigation(name: string): FunctionDef {
  return windowed(
    def(1, 3, { [name]: WINDOW_FUNCTION }, (s) => {
      const v = s.arg(0);
      const args: PgExpr[] = [v.sql];
      if (s.call.args.length > 1) args.push(windowCount(s, 1, `the offset of ${name.toUpperCase()}`, 0));
      if (s.call.args.length > 2) {
        const [value, otherwise] = unifyAll([v, s.arg(2)]);
        args[0] = value.sql;
        args.push(otherwise.sql);
      }
      return fn(name, args, v.type);
    }),
    { kind: 'function', orderBy: 'required', frame: false },
  );
}

/** An order-free aggregate of one argument, optionally with DISTINCT, usable with OVER. */
function aggregateOf(name: string, result: (t: BqType) => BqType, cast?: (t: BqType) => 'bigint' | 'float8' | undefined): FunctionDef {
  return windowed(
    def(
      1,
      1,
      { [name]: AGGREGATE },
      (s) => {
        // An untyped NULL (the elements of `UNNEST([])`) is summed as INT64, not as text.
        const v = isScalar(s.arg(0).type, 'NULL') ? typed(pg.cast(s.arg(0).sql, 'bigint'), INT64) : s.arg(0);
        const call = pg.func(name, [v.sql], { distinct: s.call.distinct });
        const to = cast?.(v.type);
        return typed(to ? pg.cast(call, to) : call, result(v.type));
      },
      { distinct: true },
    ),
    AGGREGATE_WINDOW,
  );
}

/**
 * MIN / MAX. Postgres has no min / max of ranges: the first of the group's non-NULL ranges in
 * BigQuery's order (Postgres' range order, which is the same) is taken from an ordered array_agg.
 */
function extremeOf(name: 'min' | 'max'): FunctionDef {
  const plain = aggregateOf(name, (t) => t);
  return windowed(
    def(
      1,
      1,
      { [name]: AGGREGATE, array_agg: ORDER_SENSITIVE_AGGREGATE },
      (s) => {
        const v = s.arg(0);
        if (!rangeElement(v.type)) return plain.build(s);
        // Postgres takes no ORDER BY in a windowed aggregate.
        if (s.call.over) throw new SqlUnsupportedError(`${name.toUpperCase()} of a RANGE with OVER is not supported`, s.text, s.call.pos);
        const ordered = pg.func('array_agg', [v.sql], {
          distinct: s.call.distinct,
          orderBy: [{ expr: v.sql, desc: name === 'max' }],
          filter: pg.is(v.sql, 'NULL', true),
        });
        return typed(pg.subscript(ordered, pg.number('1')), v.type);
      },
      { distinct: true },
    ),
    AGGREGATE_WINDOW,
  );
}

/**
 * A statistical aggregate of one or two numbers (STDDEV, VARIANCE, CORR, COVAR_*): FLOAT64 as in
 * BigQuery (Postgres answers numeric for integer input); a parameter or an untyped leaf is read
 * as a number. DISTINCT as BigQuery allows it: for one argument only.
 */
function statistic(name: string, arity: 1 | 2): FunctionDef {
  return windowed(
    def(
      arity,
      arity,
      { [name]: AGGREGATE },
      (s) => {
        const values = arity === 1 ? [asNumber(s.arg(0))] : [asNumber(s.arg(0)), asNumber(s.arg(1))];
        return typed(pg.cast(pg.func(name, values, { distinct: s.call.distinct }), 'float8'), FLOAT64);
      },
      arity === 1 ? { distinct: true } : undefined,
    ),
    AGGREGATE_WINDOW,
  );
}

/** LOGICAL_AND / LOGICAL_OR: Postgres' bool_and / bool_or, which skip NULLs as BigQuery does. */
function logical(name: 'bool_and' | 'bool_or'): FunctionDef {
  return windowed(
    def(1, 1, { [name]: AGGREGATE }, (s) => fn(name, [adapt(s.arg(0), BOOL).sql], BOOL)),
    AGGREGATE_WINDOW,
  );
}

/** BIT_AND / BIT_OR of INT64 values; a parameter or an untyped leaf is read as one. */
function bitwise(name: 'bit_and' | 'bit_or' | 'bit_xor'): FunctionDef {
  return windowed(
    def(
      1,
      1,
      { [name]: AGGREGATE },
      (s) => {
        const v = s.arg(0);
        const loose = v.param || (v.type.kind === 'scalar' && v.type.loose);
        if (!loose && !isScalar(v.type, 'INT64'))
          throw new SqlUnsupportedError(`${name.toUpperCase()} takes INT64 values`, s.text, s.call.args[0].pos);
        return typed(pg.func(name, [loose ? pg.cast(v.sql, 'bigint') : v.sql], { distinct: s.call.distinct }), INT64);
      },
      { distinct: true },
    ),
    AGGREGATE_WINDOW,
  );
}

/** ARRAY_AGG / STRING_AGG … LIMIT n: an integer literal, as BigQuery requires. */
function aggregateLimit(s: CallSite): number {
  const limit = s.call.limit!;
  const n = limit.kind === 'literal' && limit.type === 'INT64' ? Number(limit.value) : undefined;
  if (n === undefined || !Number.isSafeInteger(n) || n > 2_147_483_647)
    throw new SqlUnsupportedError(`${s.call.name.toUpperCase()} … LIMIT takes an integer literal`, s.text, limit.pos);
  return n;
}

const withNulls = (d: FunctionDef): FunctionDef => Object.freeze({ ...d, nulls: true });

export const FUNCTIONS: Readonly<Record<string, FunctionDef>> = {
  ...STRING_FUNCTIONS,
  ...MATH_FUNCTIONS,
  ...CONDITIONAL_FUNCTIONS,
  ...CONVERSION_FUNCTIONS,
  ...HASH_FUNCTIONS,
  ...NET_FUNCTIONS,
  // ── aggregates ──
  count: windowed(
    def(
      0,
      1,
      { count: AGGREGATE },
      (s) => {
        if (s.call.star || s.call.args.length === 0) return typed(pg.func('count', [], { star: true }), INT64);
        return typed(pg.func('count', [s.arg(0).sql], { distinct: s.call.distinct }), INT64);
      },
      { distinct: true },
    ),
    AGGREGATE_WINDOW,
  ),
  countif: windowed(
    def(1, 1, { count: AGGREGATE }, (s) => typed(pg.func('count', [], { star: true, filter: s.arg(0).sql }), INT64)),
    AGGREGATE_WINDOW,
  ),
  // Postgres sums bigint into numeric; BigQuery keeps INT64.
  sum: aggregateOf(
    'sum',
    (t) => (isScalar(t, 'INT64') ? INT64 : isScalar(t, 'NUMERIC') ? t : FLOAT64),
    (t) => (isScalar(t, 'INT64') ? 'bigint' : undefined),
  ),
  avg: aggregateOf(
    'avg',
    (t) => (isScalar(t, 'NUMERIC') ? t : FLOAT64),
    (t) => (isScalar(t, 'NUMERIC') ? undefined : 'float8'),
  ),
  min: extremeOf('min'),
  max: extremeOf('max'),
  // BigQuery's STDDEV and VARIANCE are the sample ones.
  stddev: statistic('stddev_samp', 1),
  stddev_samp: statistic('stddev_samp', 1),
  stddev_pop: statistic('stddev_pop', 1),
  variance: statistic('var_samp', 1),
  var_samp: statistic('var_samp', 1),
  var_pop: statistic('var_pop', 1),
  corr: statistic('corr', 2),
  covar_pop: statistic('covar_pop', 2),
  covar_samp: statistic('covar_samp', 2),
  logical_and: logical('bool_and'),
  logical_or: logical('bool_or'),
  bit_and: bitwise('bit_and'),
  bit_or: bitwise('bit_or'),
  bit_xor: bitwise('bit_xor'),
  // BigQuery's ANY_VALUE skips NULLs; Postgres 15 has no any_value.
  any_value: windowed(
    def(1, 1, { array_agg: ORDER_SENSITIVE_AGGREGATE }, (s) => {
      const v = s.arg(0);
      const agg = pg.func('array_agg', [v.sql], { filter: pg.is(v.sql, 'NULL', true) });
      return typed(pg.subscript(agg, pg.number('1')), v.type);
    }),
    AGGREGATE_WINDOW,
  ),
  array_agg: withNulls(
    windowed(
      def(
        1,
        1,
        { array_agg: ORDER_SENSITIVE_AGGREGATE, jsonb_agg: ORDER_SENSITIVE_AGGREGATE, to_jsonb: SCALAR },
        (s) => {
          const v = s.arg(0);
          // Records and JSON arrays aggregate into jsonb, so they come back in the stored shape.
          const json = v.type.kind !== 'scalar';
          const type: BqType = json ? { kind: 'jsonArray', element: v.type, single: false } : { kind: 'array', element: v.type };
          // IGNORE NULLS: a FILTER; the LIMIT then counts non-NULL values only, as in BigQuery.
          const filter = s.call.nulls === 'IGNORE' ? pg.is(v.sql, 'NULL', true) : undefined;
          if (s.call.limit) {
            // LIMIT n: the first n of the ordered array (a slice; Postgres aggregates take no LIMIT), back to jsonb for records.
            const slice = pg.slice(
              pg.func('array_agg', [v.sql], { distinct: s.call.distinct, orderBy: s.orderBy(), filter }),
              pg.number('1'),
              pg.number(String(aggregateLimit(s))),
            );
            return typed(json ? pg.func('to_jsonb', [slice]) : slice, type);
          }
          const agg = pg.func(json ? 'jsonb_agg' : 'array_agg', [v.sql], { distinct: s.call.distinct, orderBy: s.orderBy(), filter });
          return typed(agg, type);
        },
        { distinct: true, orderBy: true },
      ),
      AGGREGATE_WINDOW,
    ),
  ),
  string_agg: windowed(
    def(
      1,
      2,
      { string_agg: ORDER_SENSITIVE_AGGREGATE, array_to_string: TOTAL },
      (s) => {
        const delimiter = s.call.args.length > 1 ? s.arg(1).sql : pg.literal(',');
        const text = asText(s.arg(0));
        if (s.call.limit) {
          // LIMIT n: the first n non-NULL values of the ordered array, joined (string_agg takes no LIMIT).
          const values = pg.func('array_agg', [text], {
            distinct: s.call.distinct,
            orderBy: s.orderBy(),
            filter: pg.is(text, 'NULL', true),
          });
          const slice = pg.slice(values, pg.number('1'), pg.number(String(aggregateLimit(s))));
          return typed(pg.func('array_to_string', [slice, delimiter]), STRING);
        }
        return typed(pg.func('string_agg', [text, delimiter], { distinct: s.call.distinct, orderBy: s.orderBy() }), STRING);
      },
      { distinct: true, orderBy: true },
    ),
    AGGREGATE_WINDOW,
  ),
  // An ordered-set aggregate: its WITHIN GROUP orders the input, and it takes no OVER.
  approx_quantiles: def(2, 2, { percentile_disc: aggregate({ orderSensitive: false, window: false }) }, (s) => {
    const buckets = s.integerLiteral(1);
    if (buckets === undefined || buckets < 1 || buckets > 1000)
      throw new SqlUnsupportedError('approx_quantiles needs a literal number of quantiles from 1 to 1000', s.text, s.call.args[1].pos);
    const fractions = Array.from({ length: buckets + 1 }, (_, k) => pg.number(String(k / buckets)));
    const v = s.arg(0);
    const agg = pg.func('percentile_disc', [pg.array(fractions)], { withinGroup: [{ expr: v.sql, desc: false }] });
    return typed(agg, { kind: 'array', element: v.type });
  }),

  // ── window functions (OVER required) ──
  row_number: numbering('row_number', INT64),
  rank: numbering('rank', INT64, 'required'),
  dense_rank: numbering('dense_rank', INT64, 'required'),
  percent_rank: numbering('percent_rank', FLOAT64, 'required'),
  cume_dist: numbering('cume_dist', FLOAT64, 'required'),
  ntile: windowed(
    def(1, 1, { ntile: WINDOW_FUNCTION }, (s) => fn('ntile', [windowCount(s, 0, 'the number of NTILE buckets', 1)], INT64)),
    { kind: 'function', orderBy: 'required', frame: false },
  ),
  lag: navigation('lag'),
  lead: navigation('lead'),
  // ── arrays ──
  // cardinality: 0 for an empty array (array_length gives NULL); a JSON value that is not an array counts as missing.
  array_length: def(1, 1, { cardinality: SCALAR, jsonb_array_length: SCALAR, jsonb_typeof: SCALAR }, (s) => {
    const v = s.arg(0);
    if (v.type.kind === 'array') return typed(pg.cast(pg.func('cardinality', [v.sql]), 'bigint'), INT64);
    if (v.type.kind === 'jsonArray') {
      const array = pg.case([{ when: pg.op('=', pg.func('jsonb_typeof', [v.sql]), pg.literal('array')), then: v.sql }]);
      return typed(pg.cast(pg.func('jsonb_array_length', [array]), 'bigint'), INT64);
    }
    if (isScalar(v.type, 'NULL')) return typed(pg.cast(pg.literal(null), 'bigint'), INT64);
    throw new SqlUnsupportedError('ARRAY_LENGTH needs an array', s.text, s.call.args[0].pos);
  }),

  ...DATETIME_FUNCTIONS,
  ...JSON_FUNCTIONS,
  ...ARRAY_FUNCTIONS,
  ...AGGREGATE_FUNCTIONS,
  ...WINDOW_FUNCTIONS,
  ...RANGE_FUNCTIONS,
};
