/**
 * BigQuery's mathematical functions (its reference, "Mathematical functions"). FLOAT64 functions
 * take any number (INT64 and NUMERIC are coerced, as BigQuery does) and answer FLOAT64; errors are
 * BigQuery's: outside a function's domain (SQRT(-1), LN(0), COT(0)) the query fails, and the `SAFE.`
 * form answers NULL there instead. Where Postgres raises on a value BigQuery answers (SIN(+inf) is
 * NaN), the value is answered.
 */
import { SqlUnsupportedError } from '../errors.js';
import type { CallSite, FunctionDef } from '../functions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { PARTIAL_STRICT, SCALAR, TOTAL_STRICT, scalar as scalarFacts } from '../postgres/facts.js';
import { BOOL, FLOAT64, INT64, isNumeric, isScalar, scalar, typed, type BqType, type Typed } from '../types.js';
import { unifyAll } from '../coerce.js';
import { def, defWith, float64Arg, int64Arg, numberArg, wrongType } from './define.js';

const float = (text: string): PgExpr => pg.cast(pg.literal(text), 'float8');
const INF = float('Infinity');
const NAN = float('NaN');
const MIN_MAX = scalarFacts({ mayFail: true, syntax: true });

/**
 * A FLOAT64 function of one FLOAT64. `domain` is where BigQuery computes it (outside, an error;
 * `SAFE.`: NULL); `infinite` is its answer for ±inf where Postgres would raise instead.
 */
function unary(
  pgName: string,
  options: { domain?: (x: PgExpr) => PgExpr; infinite?: 'NaN'; build?: (x: PgExpr) => PgExpr } = {},
): FunctionDef {
  const build = options.build ?? ((x: PgExpr) => pg.func(pgName, [x]));
  const value = (x: PgExpr): PgExpr =>
    options.infinite ? pg.case([{ when: pg.op('=', pg.func('abs', [x]), INF), then: NAN }], build(x)) : build(x);
  const entry = def(1, 1, { [pgName]: SCALAR, abs: SCALAR }, (s) => typed(value(float64Arg(s, 0)), FLOAT64));
  const domain = options.domain;
  return defWith(entry, {
    safe: domain
      ? (s) => {
          const x = float64Arg(s, 0);
          return typed(pg.case([{ when: domain(x), then: value(x) }]), FLOAT64);
        }
      : 'same',
  });
}

/** Not below `low` (NaN passes: the function answers NaN for it). */
const notBelow = (low: string) => (x: PgExpr) => pg.not(pg.op('<', x, pg.number(low)));
const notZero = (x: PgExpr) => pg.op('<>', x, pg.number('0'));
const within = (low: string, high: string) => (x: PgExpr) => pg.not(pg.or(pg.op('<', x, pg.number(low)), pg.op('>', x, pg.number(high))));
const positive = (x: PgExpr) => pg.not(pg.op('<=', x, pg.number('0')));

/** The result type of ROUND, TRUNC, CEIL, FLOOR: NUMERIC stays NUMERIC, anything else is FLOAT64. */
function rounding(pgName: 'round' | 'trunc' | 'ceil' | 'floor', maxArgs: 1 | 2): FunctionDef {
  return defWith(
    def(1, maxArgs, { [pgName]: SCALAR }, (s) => {
      const v = numberArg(s, 0);
      const places = s.call.args.length > 1 ? [pg.cast(int64Arg(s, 1), 'integer')] : [];
      // numeric rounds half away from zero, like BigQuery, and round(float8, int) does not exist.
      if (isScalar(v.type, 'NUMERIC')) return typed(pg.func(pgName, [v.sql, ...places]), v.type);
      if (!places.length && pgName !== 'round') return typed(pg.func(pgName, [pg.cast(v.sql, 'float8')]), FLOAT64);
      // ±inf and NaN have no numeric form with digits to round: they are their own rounding.
      const x = pg.cast(v.sql, 'float8');
      const rounded = pg.cast(pg.func(pgName, [pg.cast(x, 'numeric'), ...places]), 'float8');
      return typed(pg.case([{ when: pg.or(pg.op('=', pg.func('abs', [x]), INF), pg.op('=', x, NAN)), then: x }], rounded), FLOAT64);
    }),
    { safe: 'same' },
  );
}

/** SAFE_ADD / SAFE_SUBTRACT / SAFE_MULTIPLY / SAFE_NEGATE: NULL on overflow (logs.bq_safe_* of the migration). */
function safeArithmetic(op: 'add' | 'subtract' | 'multiply' | 'negate'): FunctionDef {
  const name = `logs.bq_safe_${op}`;
  const arity = op === 'negate' ? 1 : 2;
  return defWith(
    def(arity, arity, { [name]: TOTAL_STRICT }, (s) => {
      const values = unifyAll(Array.from({ length: arity }, (_, i) => numberArg(s, i)));
      const type = resultType(values);
      const pgType = isScalar(type, 'INT64') ? 'bigint' : isScalar(type, 'NUMERIC') ? 'numeric' : 'float8';
      return typed(
        pg.func(
          name,
          values.map((v) => pg.cast(v.sql, pgType)),
        ),
        type,
      );
    }),
    { safe: 'same' },
  );
}

/** BigQuery's supertype of numbers: FLOAT64 over NUMERIC over INT64. */
function resultType(values: readonly Typed[]): BqType {
  if (values.some((v) => isScalar(v.type, 'FLOAT64'))) return FLOAT64;
  if (values.some((v) => isScalar(v.type, 'NUMERIC'))) return scalar('NUMERIC');
  return values.every((v) => isScalar(v.type, 'INT64', 'NULL')) ? INT64 : FLOAT64;
}

/** GREATEST / LEAST: NULL when any argument is NULL, and NaN when any is NaN, as in BigQuery (Postgres skips NULLs). */
function extreme(pgName: 'greatest' | 'least'): FunctionDef {
  return def(1, 100, { [pgName]: MIN_MAX }, (s) => {
    const values = unifyAll(s.call.args.map((_, i) => s.arg(i)));
    const type = values.find((v) => !isScalar(v.type, 'NULL'))?.type ?? scalar('NULL');
    const anyNull = pg.or(...values.map((v) => pg.is(v.sql, 'NULL')));
    const whens: { when: PgExpr; then: PgExpr }[] = [{ when: anyNull, then: pg.literal(null) }];
    if (isScalar(type, 'FLOAT64')) whens.push({ when: pg.or(...values.map((v) => pg.op('=', v.sql, NAN))), then: NAN });
    return typed(
      pg.case(
        whens,
        pg.func(
          pgName,
          values.map((v) => v.sql),
        ),
      ),
      type,
    );
  });
}

/** An INT64 function of INT64 values (DIV, MOD). */
function integerOnly(s: CallSite, i: number): PgExpr {
  const v = s.arg(i);
  if (isScalar(v.type, 'NUMERIC')) return v.sql;
  return int64Arg(s, i);
}

export const MATH_FUNCTIONS: Readonly<Record<string, FunctionDef>> = {
  abs: def(1, 1, { abs: SCALAR }, (s) => {
    const v = numberArg(s, 0);
    return typed(pg.func('abs', [v.sql]), v.type);
  }),
  sign: defWith(
    def(1, 1, { sign: TOTAL_STRICT }, (s) => {
      const v = numberArg(s, 0);
      if (isScalar(v.type, 'INT64')) return typed(pg.cast(pg.func('sign', [pg.cast(v.sql, 'numeric')]), 'bigint'), INT64);
      // Postgres' sign(NaN) is 0.
      if (isScalar(v.type, 'FLOAT64'))
        return typed(pg.case([{ when: pg.op('=', v.sql, NAN), then: NAN }], pg.func('sign', [v.sql])), v.type);
      return typed(pg.func('sign', [v.sql]), v.type);
    }),
    { safe: 'same' },
  ),
  is_inf: defWith(
    def(1, 1, { abs: SCALAR }, (s) => typed(pg.op('=', pg.func('abs', [float64Arg(s, 0)]), INF), BOOL)),
    { safe: 'same' },
  ),
  // Postgres' NaN equals NaN (it sorts NaN above every number).
  is_nan: defWith(
    def(1, 1, {}, (s) => typed(pg.op('=', float64Arg(s, 0), NAN), BOOL)),
    { safe: 'same' },
  ),
  // x / 0 is ±inf, 0 / 0 NaN: IEEE 754, where Postgres raises division by zero.
  ieee_divide: defWith(
    def(2, 2, {}, (s) => {
      const x = float64Arg(s, 0);
      const y = float64Arg(s, 1);
      // NaN first: Postgres sorts NaN above every number, so NaN > 0 holds there.
      const byZero = pg.case(
        [
          { when: pg.op('=', x, NAN), then: NAN },
          { when: pg.op('>', x, pg.number('0')), then: INF },
          { when: pg.op('<', x, pg.number('0')), then: pg.neg(INF) },
        ],
        NAN,
      );
      return typed(pg.case([{ when: pg.op('=', y, pg.number('0')), then: byZero }], pg.op('/', x, y)), FLOAT64);
    }),
    { safe: 'same' },
  ),
  sqrt: unary('sqrt', { domain: notBelow('0') }),
  cbrt: unary('cbrt'),
  exp: unary('exp', { domain: (x) => pg.not(pg.op('>', x, pg.number('709.782712893384'))) }),
  ln: unary('ln', { domain: positive }),
  log10: unary('log10', { domain: positive }),
  // LOG(X) is the natural logarithm; LOG(X, Y) the logarithm of X to base Y (Postgres' log(b, x) is numeric only).
  log: defWith(
    def(1, 2, { ln: SCALAR, log: SCALAR }, (s) => {
      const x = float64Arg(s, 0);
      if (s.call.args.length === 1) return typed(pg.func('ln', [x]), FLOAT64);
      return typed(pg.op('/', pg.func('ln', [x]), pg.func('ln', [float64Arg(s, 1)])), FLOAT64);
    }),
    {
      safe: (s) => {
        const x = float64Arg(s, 0);
        if (s.call.args.length === 1) return typed(pg.case([{ when: positive(x), then: pg.func('ln', [x]) }]), FLOAT64);
        const b = float64Arg(s, 1);
        const ok = pg.and(positive(x), positive(b), pg.op('<>', b, pg.number('1')));
        return typed(pg.case([{ when: ok, then: pg.op('/', pg.func('ln', [x]), pg.func('ln', [b])) }]), FLOAT64);
      },
    },
  ),
  pow: powerDef(),
  power: powerDef(),
  sin: unary('sin', { infinite: 'NaN' }),
  cos: unary('cos', { infinite: 'NaN' }),
  tan: unary('tan', { infinite: 'NaN' }),
  asin: unary('asin', { domain: within('-1', '1') }),
  acos: unary('acos', { domain: within('-1', '1') }),
  atan: unary('atan'),
  sinh: unary('sinh', { domain: (x) => pg.not(pg.op('>', pg.func('abs', [x]), pg.number('710.4758600739439'))) }),
  cosh: unary('cosh', { domain: (x) => pg.not(pg.op('>', pg.func('abs', [x]), pg.number('710.4758600739439'))) }),
  tanh: unary('tanh'),
  asinh: unary('asinh'),
  acosh: unary('acosh', { domain: notBelow('1') }),
  atanh: unary('atanh', { domain: (x) => pg.not(pg.or(pg.op('<=', x, pg.number('-1')), pg.op('>=', x, pg.number('1')))) }),
  // 1 / f(x): an error where f(x) is 0 (float8 division by zero), as in BigQuery; ±inf reads as NaN.
  cot: unary('tan', { domain: notZero, infinite: 'NaN', build: (x) => pg.op('/', pg.number('1'), pg.func('tan', [x])) }),
  csc: unary('sin', { domain: notZero, infinite: 'NaN', build: (x) => pg.op('/', pg.number('1'), pg.func('sin', [x])) }),
  sec: unary('cos', { infinite: 'NaN', build: (x) => pg.op('/', pg.number('1'), pg.func('cos', [x])) }),
  coth: unary('tanh', { domain: notZero, build: (x) => pg.op('/', pg.number('1'), pg.func('tanh', [x])) }),
  csch: unary('sinh', { domain: notZero, build: (x) => pg.op('/', pg.number('1'), pg.func('sinh', [x])) }),
  sech: unary('cosh', { build: (x) => pg.op('/', pg.number('1'), pg.func('cosh', [x])) }),
  atan2: defWith(
    def(2, 2, { atan2: SCALAR }, (s) => typed(pg.func('atan2', [float64Arg(s, 0), float64Arg(s, 1)]), FLOAT64)),
    { safe: 'same' },
  ),
  round: rounding('round', 2),
  trunc: rounding('trunc', 2),
  ceil: rounding('ceil', 1),
  ceiling: rounding('ceil', 1),
  floor: rounding('floor', 1),
  // Integer division towards zero; by 0 it is an error, as in BigQuery (bigint / bigint in Postgres).
  div: def(2, 2, { div: PARTIAL_STRICT }, (s) => {
    const [x, y] = [integerOnly(s, 0), integerOnly(s, 1)];
    if (isScalar(s.arg(0).type, 'NUMERIC') || isScalar(s.arg(1).type, 'NUMERIC'))
      return typed(pg.func('div', [pg.cast(x, 'numeric'), pg.cast(y, 'numeric')]), scalar('NUMERIC'));
    return typed(pg.op('/', x, y), INT64);
  }),
  mod: def(2, 2, { mod: SCALAR }, (s) => {
    const numeric = isScalar(s.arg(0).type, 'NUMERIC') || isScalar(s.arg(1).type, 'NUMERIC');
    const [x, y] = [integerOnly(s, 0), integerOnly(s, 1)];
    return numeric
      ? typed(pg.func('mod', [pg.cast(x, 'numeric'), pg.cast(y, 'numeric')]), scalar('NUMERIC'))
      : typed(pg.func('mod', [x, y]), INT64);
  }),
  greatest: extreme('greatest'),
  least: extreme('least'),
  safe_add: safeArithmetic('add'),
  safe_subtract: safeArithmetic('subtract'),
  safe_multiply: safeArithmetic('multiply'),
  safe_negate: safeArithmetic('negate'),
  safe_divide: defWith(
    def(2, 2, { nullif: scalarFacts({ mayFail: true, syntax: true }) }, (s) =>
      typed(pg.op('/', float64Arg(s, 0), pg.func('nullif', [float64Arg(s, 1), pg.number('0')])), FLOAT64),
    ),
    { safe: 'same' },
  ),
  // RANGE_BUCKET(point, boundaries): how many boundaries are ≤ point, Postgres' width_bucket over an array.
  range_bucket: def(2, 2, { width_bucket: SCALAR }, (s) => {
    const point = numberArg(s, 0);
    const bounds = s.arg(1);
    // `[]`: no boundary is ≤ any point.
    if (bounds.type.kind === 'array' && isScalar(bounds.type.element, 'NULL'))
      return typed(pg.case([{ when: pg.is(point.sql, 'NULL'), then: pg.literal(null) }], pg.cast(pg.number('0'), 'bigint')), INT64);
    if (bounds.type.kind !== 'array' || !isNumeric(bounds.type.element))
      throw new SqlUnsupportedError('RANGE_BUCKET takes an ARRAY of numbers as its second argument', s.text, s.call.args[1].pos);
    const same = isScalar(point.type, 'INT64') && isScalar(bounds.type.element, 'INT64');
    return typed(pg.cast(pg.func('width_bucket', [same ? point.sql : pg.cast(point.sql, 'float8'), bounds.sql]), 'bigint'), INT64);
  }),
  // Bits set in the two's complement of an INT64 (logs.bq_bit_count).
  bit_count: defWith(
    def(1, 1, { 'logs.bq_bit_count': TOTAL_STRICT }, (s) => {
      if (!isScalar(s.arg(0).type, 'INT64', 'NULL') && !s.arg(0).param) wrongType(s, 0, 'INT64');
      return typed(pg.func('logs.bq_bit_count', [int64Arg(s, 0)]), INT64);
    }),
    { safe: 'same' },
  ),
};

/** POW / POWER: FLOAT64 (NUMERIC for NUMERIC); 0 to a negative power and a negative number to a fractional one are errors. */
function powerDef(): FunctionDef {
  const build = (s: CallSite, safe: boolean): Typed => {
    const [x, y] = [numberArg(s, 0), numberArg(s, 1)];
    const numeric = isScalar(x.type, 'NUMERIC') && isScalar(y.type, 'NUMERIC');
    const [a, b] = numeric ? [x.sql, y.sql] : [pg.cast(x.sql, 'float8'), pg.cast(y.sql, 'float8')];
    const call = pg.func('power', [a, b]);
    if (!safe) return typed(call, numeric ? x.type : FLOAT64);
    const bad = pg.or(
      pg.and(pg.op('=', a, pg.number('0')), pg.op('<', b, pg.number('0'))),
      pg.and(pg.op('<', a, pg.number('0')), pg.op('<>', b, pg.func('floor', [b]))),
    );
    return typed(pg.case([{ when: bad, then: pg.literal(null) }], call), numeric ? x.type : FLOAT64);
  };
  return defWith(
    def(2, 2, { power: SCALAR, floor: SCALAR }, (s) => build(s, false)),
    { safe: (s) => build(s, true) },
  );
}
