/**
 * ARRAY_CONCAT_AGG concatenates with the aggregates of
 * migrations/1764810003000_bigquery-array-concat-agg.js; MAX_BY / MIN_BY (BigQuery's
 * `ANY_VALUE(x HAVING MAX y)`) take x of a row with the greatest (least) non-NULL y.
 *
 * Approximate aggregates, computed exactly (BigQuery's sketches only bound the error; an exact
 * answer is within any bound): APPROX_COUNT_DISTINCT is COUNT(DISTINCT), APPROX_TOP_COUNT /
 * APPROX_TOP_SUM rank the group's values collected with jsonb_agg (`logs.bq_top_count` /
 * `logs.bq_top_sum`, migrations/1764200000000_bigquery-library-functions.js). Ties are broken by
 * value, so the answer is deterministic.
 */
import { SqlUnsupportedError } from '../errors.js';
import type { CallSite, FunctionDef } from '../functions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { AGGREGATE, ORDER_SENSITIVE_AGGREGATE, SCALAR, scalar as scalarFacts } from '../postgres/facts.js';
import { jsonStoredType } from '../resolve/structs.js';
import { INT64, isNumeric, typed, type BqType } from '../types.js';
import { SqlSyntaxError } from '../errors.js';
import { def } from './define.js';

const TOP = scalarFacts({ mayFail: false, strict: true, evaluatesAllArguments: true });

/** The number of top elements: a positive integer literal, as BigQuery requires (or a parameter). */
function topN(site: CallSite, i: number): PgExpr {
  const n = site.integerLiteral(i);
  if (n !== undefined && n >= 1 && n <= 100_000) return pg.number(String(n));
  if (site.call.args[i].kind === 'param') return pg.cast(site.arg(i).sql, 'bigint');
  throw new SqlUnsupportedError('the number of top elements must be a positive integer literal', site.text, site.call.args[i].pos);
}

const topOf = (value: BqType, field: string, type: BqType): BqType => ({
  kind: 'jsonArray',
  element: {
    kind: 'record',
    struct: [
      { name: 'value', type: jsonStoredType(value) },
      { name: field, type },
    ],
  },
  single: false,
});

/**
 * MAX_BY / MIN_BY: among the rows whose y is the greatest (least) non-NULL one, a non-NULL x if one
 * has it (ANY_VALUE skips NULLs), else NULL; ties are broken by x so that the answer is
 * deterministic (cached results and the rewrites must not change it). NULL without such rows.
 */
function valueBy(desc: boolean): FunctionDef {
  return def(2, 2, { array_agg: ORDER_SENSITIVE_AGGREGATE }, (s) => {
    const [x, y] = [s.arg(0), s.arg(1)];
    if (y.type.kind !== 'scalar')
      throw new SqlSyntaxError(
        `${s.call.name.toUpperCase()} orders by a value, not an ARRAY or STRUCT (argument 2)`,
        s.text,
        s.call.args[1].pos,
      );
    const agg = pg.func('array_agg', [x.sql], {
      orderBy: [
        { expr: y.sql, desc },
        { expr: pg.is(x.sql, 'NULL'), desc: false },
        { expr: x.sql, desc: false },
      ],
      filter: pg.is(y.sql, 'NULL', true),
    });
    return typed(pg.subscript(agg, pg.number('1')), x.type);
  });
}

export const AGGREGATE_FUNCTIONS: Readonly<Record<string, FunctionDef>> = {
  max_by: valueBy(true),
  min_by: valueBy(false),
  // ORDER BY orders the arrays; LIMIT (a number of arrays) is not supported: Postgres' aggregates take none, and no array of arrays holds them.
  array_concat_agg: def(
    1,
    1,
    { 'logs.bq_array_concat_agg': ORDER_SENSITIVE_AGGREGATE, 'logs.bq_jsonb_array_concat_agg': ORDER_SENSITIVE_AGGREGATE },
    (s) => {
      if (s.call.limit) throw new SqlUnsupportedError('ARRAY_CONCAT_AGG … LIMIT is not supported', s.text, s.call.limit.pos);
      const v = s.arg(0);
      if (v.type.kind === 'array') return typed(pg.func('logs.bq_array_concat_agg', [v.sql], { orderBy: s.orderBy() }), v.type);
      if (v.type.kind === 'jsonArray') return typed(pg.func('logs.bq_jsonb_array_concat_agg', [v.sql], { orderBy: s.orderBy() }), v.type);
      throw new SqlSyntaxError(`ARRAY_CONCAT_AGG takes an ARRAY as argument 1`, s.text, s.call.args[0].pos);
    },
    { orderBy: true },
  ),
  approx_count_distinct: def(1, 1, { count: AGGREGATE }, (s) => typed(pg.func('count', [s.arg(0).sql], { distinct: true }), INT64)),
  approx_top_count: def(2, 2, { jsonb_agg: ORDER_SENSITIVE_AGGREGATE, 'logs.bq_top_count': TOP }, (s) => {
    const v = s.arg(0);
    return typed(pg.func('logs.bq_top_count', [pg.func('jsonb_agg', [v.sql]), topN(s, 1)]), topOf(v.type, 'count', INT64));
  }),
  approx_top_sum: def(3, 3, { jsonb_agg: ORDER_SENSITIVE_AGGREGATE, jsonb_build_array: SCALAR, 'logs.bq_top_sum': TOP }, (s) => {
    const v = s.arg(0);
    const weight = s.arg(1);
    if (!isNumeric(weight.type)) throw new SqlUnsupportedError('APPROX_TOP_SUM weights must be numbers', s.text, s.call.args[1].pos);
    const pairs = pg.func('jsonb_agg', [pg.func('jsonb_build_array', [v.sql, weight.sql])]);
    return typed(pg.func('logs.bq_top_sum', [pairs, topN(s, 2)]), topOf(v.type, 'sum', weight.type));
  }),
};
