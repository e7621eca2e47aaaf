/**
 * Navigation functions with BigQuery's options. FIRST_VALUE / LAST_VALUE / NTH_VALUE take
 * IGNORE NULLS, which Postgres 15's window functions do not: the frame's non-NULL values are
 * collected (`array_agg … FILTER (WHERE x IS NOT NULL) OVER w`, same frame) and indexed.
 * PERCENTILE_CONT / PERCENTILE_DISC are window functions over the whole partition in BigQuery and
 * ordered-set aggregates (no OVER) in Postgres: the partition's values are collected by
 * `array_agg(x) OVER (PARTITION BY …)` and `logs.bq_percentile_cont` / `_disc`
 * (migrations/1764200000000_bigquery-library-functions.js) pick the value, ignoring NULLs as
 * BigQuery does by default.
 */
import { asNumber } from '../coerce.js';
import { SqlUnsupportedError } from '../errors.js';
import type { CallSite, FunctionDef } from '../functions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { ORDER_SENSITIVE_AGGREGATE, TOTAL_STRICT, WINDOW_FUNCTION, scalar as scalarFacts } from '../postgres/facts.js';
import { FLOAT64, typed, type Typed } from '../types.js';
import { def, fn, windowCount, windowed } from './define.js';

const ignoresNulls = (s: CallSite): boolean => s.call.nulls === 'IGNORE';

/** The frame's non-NULL values, in frame order (OVER is attached to the array_agg). */
function nonNull(v: Typed): PgExpr {
  return pg.func('array_agg', [v.sql], { filter: pg.is(v.sql, 'NULL', true) });
}

/** FIRST_VALUE / LAST_VALUE / NTH_VALUE: Postgres' function, or the i-th non-NULL value of the frame. */
function navigation(name: 'first_value' | 'last_value' | 'nth_value', arity: 1 | 2): FunctionDef {
  return Object.freeze({
    ...windowed(
      def(arity, arity, { [name]: WINDOW_FUNCTION, array_agg: ORDER_SENSITIVE_AGGREGATE, 'logs.bq_array_reverse': TOTAL_STRICT }, (s) => {
        const v = s.arg(0);
        const position = arity === 2 ? windowCount(s, 1, 'the position of NTH_VALUE', 1) : undefined;
        if (!ignoresNulls(s)) return fn(name, position ? [v.sql, position] : [v.sql], v.type);
        const values = nonNull(v);
        if (name === 'first_value') return typed(pg.subscript(values, pg.number('1')), v.type);
        if (name === 'nth_value') return typed(pg.subscript(values, position!), v.type);
        // One collection per call (OVER goes to the first aggregate): the last value is the first of it reversed.
        return typed(pg.subscript(pg.func('logs.bq_array_reverse', [values]), pg.number('1')), v.type);
      }),
      { kind: 'function', frame: true },
    ),
    nulls: true,
  });
}

/** PERCENTILE_CONT / PERCENTILE_DISC (x, fraction) OVER (PARTITION BY …). */
function percentile(name: 'cont' | 'disc'): FunctionDef {
  const pgName = `logs.bq_percentile_${name}`;
  return Object.freeze({
    ...windowed(
      def(
        2,
        2,
        { array_agg: ORDER_SENSITIVE_AGGREGATE, [pgName]: scalarFacts({ mayFail: true, strict: true, evaluatesAllArguments: true }) },
        (s) => {
          if (s.call.nulls === 'RESPECT')
            throw new SqlUnsupportedError(`PERCENTILE_${name.toUpperCase()} … RESPECT NULLS is not supported`, s.text, s.call.pos);
          const v = s.arg(0);
          const values = name === 'cont' ? pg.cast(asNumber(v), 'float8') : v.sql;
          return typed(
            pg.func(pgName, [pg.func('array_agg', [values]), pg.cast(asNumber(s.arg(1)), 'float8')]),
            name === 'cont' ? FLOAT64 : v.type,
          );
        },
      ),
      { kind: 'function', orderBy: 'forbidden', frame: false },
    ),
    nulls: true,
  });
}

export const WINDOW_FUNCTIONS: Readonly<Record<string, FunctionDef>> = {
  first_value: navigation('first_value', 1),
  last_value: navigation('last_value', 1),
  nth_value: navigation('nth_value', 2),
  percentile_cont: percentile('cont'),
  percentile_disc: percentile('disc'),
};
