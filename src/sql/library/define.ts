/**
/**
 * What every entry of the function table is built with: `def` (arity, emitted Postgres functions,
 * builder), `defWith` (named arguments, the `SAFE.` form), `fn` (one typed call), `windowed` (may /
 * must take OVER), and the argument readers that turn a wrong type into a 400 naming the function.
 * functions.ts and the category files of library/ share them; they live here, not in functions.ts,
 * because functions.ts imports the category files and they must be defined before those are evaluated.
 */
import type { CallSite, Emits, FunctionDef } from '../functions.js';
import { SqlLimitError, SqlSyntaxError, SqlUnsupportedError } from '../errors.js';
import type { Expr } from '../ast/expressions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { isNumeric, isScalar, scalar, typed, type BqType, type Typed } from '../types.js';

export const def = (
  min: number,
  max: number,
  emits: Emits,
  build: FunctionDef['build'],
  aggregate?: FunctionDef['aggregate'],
): FunctionDef => Object.freeze({ min, max, emits, build, aggregate });

/** An entry with more to say than `def` takes: named arguments (`params`), its `SAFE.` form. */
export const defWith = (d: FunctionDef, extra: Pick<FunctionDef, 'params' | 'safe' | 'named'>): FunctionDef =>
  Object.freeze({ ...d, ...extra });

export const fn = (name: string, args: PgExpr[], type: BqType): Typed => typed(pg.func(name, args), type);

export const windowed = (d: FunctionDef, window: FunctionDef['window']): FunctionDef => Object.freeze({ ...d, window });

/** An aggregate that may take OVER, with any frame. */
export const AGGREGATE_WINDOW = Object.freeze({ kind: 'aggregate', frame: true } as const);

/** Every argument of the call, resolved. */
export function args(site: CallSite): Typed[] {
  return site.call.args.map((_, i) => site.arg(i));
}

/** A non-negative integer argument of a window function, as a literal or a parameter. */
export function windowCount(s: CallSite, i: number, what: string, min: number): PgExpr {
  const n = s.integerLiteral(i);
  if (n !== undefined) {
    if (n < min || n > 2_147_483_647)
      throw new SqlUnsupportedError(`${what} must be ${min === 0 ? 'non-negative' : 'positive'}`, s.text, s.call.args[i].pos);
    return pg.number(String(n));
  }
  if (s.call.args[i].kind === 'param') return pg.cast(s.arg(i).sql, 'integer');
  throw new SqlUnsupportedError(`${what} must be an integer literal or a parameter`, s.text, s.call.args[i].pos);
}

/** The most elements GENERATE_*_ARRAY may make (`logs.bq_array_size_check` holds the same bound at run time). */
export const MAX_GENERATED_ELEMENTS = 100_000;

const SECONDS_PER_UNIT: Readonly<Record<string, number>> = {
  MICROSECOND: 1e-6,
  MILLISECOND: 1e-3,
  SECOND: 1,
  MINUTE: 60,
  HOUR: 3600,
  DAY: 86400,
  WEEK: 604800,
  MONTH: 2_592_000,
  QUARTER: 7_776_000,
  YEAR: 31_536_000,
};

/** A literal argument as a number: numbers, negated numbers, times (`'2016-10-05'`, `DATE '…'`) as epoch seconds, INTERVALs as seconds. */
function literalValue(e: Expr): number | undefined {
  if (e.kind === 'literal' && (e.type === 'INT64' || e.type === 'FLOAT64')) return Number(e.value);
  if (e.kind === 'unary' && e.op === '-') {
    const v = literalValue(e.operand);
    return v === undefined ? undefined : -v;
  }
  const text =
    e.kind === 'literal' && e.type === 'STRING' ? e.value : e.kind === 'cast' && e.operand.kind === 'literal' ? e.operand.value : undefined;
  if (typeof text === 'string') {
    const ms = Date.parse(
      /[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text.replace(' ', 'T') : `${text.replace(' ', 'T')}${text.includes(':') ? 'Z' : 'T00:00:00Z'}`,
    );
    return Number.isNaN(ms) ? undefined : ms / 1000;
  }
  if (e.kind === 'interval' && SECONDS_PER_UNIT[e.unit] !== undefined) {
    const n = literalValue(e.value);
    return n === undefined ? undefined : n * SECONDS_PER_UNIT[e.unit];
  }
  return undefined;
}

/**
 * GENERATE_*_ARRAY with literal bounds and step: refused when it would make more than
 * MAX_GENERATED_ELEMENTS elements, before anything runs (a query must not build arrays of any size).
 */
export function refuseHugeArray(site: CallSite, defaultStep: number): void {
  const [first, last] = [literalValue(site.call.args[0]), literalValue(site.call.args[1])];
  const step = site.call.args.length > 2 ? literalValue(site.call.args[2]) : defaultStep;
  if (first === undefined || last === undefined || step === undefined || step === 0) return;
  if ((last - first) / step >= MAX_GENERATED_ELEMENTS)
    throw new SqlLimitError(
      `${site.call.name.toUpperCase()} would make more than ${MAX_GENERATED_ELEMENTS} elements`,
      site.text,
      site.call.pos,
    );
}

/** A value may stand for any scalar type: a parameter (bound as text), an untyped JSON leaf, NULL. */
function untyped(v: Typed): boolean {
  return v.param === true || (v.type.kind === 'scalar' && (v.type.loose === true || v.type.name === 'NULL'));
}

function typeLabel(t: BqType): string {
  return t.kind === 'scalar' ? t.name : t.kind === 'record' ? 'STRUCT' : 'ARRAY';
}

/** BigQuery's "no matching signature": a 400 at the argument, naming the function and the types. */
export function wrongType(s: CallSite, i: number, wanted: string): never {
  throw new SqlSyntaxError(
    `${s.call.name.toUpperCase()} takes ${wanted} as argument ${i + 1}, not ${typeLabel(s.arg(i).type)}`,
    s.text,
    s.call.args[i].pos,
  );
}

/** The i-th argument as text; only STRING (or an untyped value) is one, as in BigQuery. */
export function stringArg(s: CallSite, i: number): PgExpr {
  const v = s.arg(i);
  if (untyped(v) || isScalar(v.type, 'STRING')) return v.sql;
  return wrongType(s, i, 'STRING');
}

/** The i-th argument as a bigint: INT64 or an untyped value. */
export function int64Arg(s: CallSite, i: number): PgExpr {
  const v = s.arg(i);
  if (isScalar(v.type, 'INT64')) return v.sql;
  if (untyped(v)) return pg.cast(v.sql, 'bigint');
  return wrongType(s, i, 'INT64');
}

/** The i-th argument as a float8: any number (INT64 and NUMERIC are coerced to FLOAT64, as BigQuery does) or an untyped value. */
export function float64Arg(s: CallSite, i: number): PgExpr {
  const v = s.arg(i);
  if (isScalar(v.type, 'FLOAT64')) return v.sql;
  if (untyped(v) || isNumeric(v.type)) return pg.cast(v.sql, 'float8');
  return wrongType(s, i, 'FLOAT64');
}

/** The i-th argument, which must be a number (INT64, NUMERIC, FLOAT64); untyped values are read as FLOAT64. */
export function numberArg(s: CallSite, i: number): Typed {
  const v = s.arg(i);
  if (isNumeric(v.type)) return v;
  if (untyped(v)) return typed(pg.cast(v.sql, 'float8'), scalar('FLOAT64'));
  return wrongType(s, i, 'a number');
}

/** The i-th argument, or `otherwise` when the call has fewer. */
export function optional(s: CallSite, i: number, read: (s: CallSite, i: number) => PgExpr, otherwise: PgExpr): PgExpr {
  return i < s.call.args.length ? read(s, i) : otherwise;
}

/**
 * Gives `SAFE.` to each entry of a category that cannot raise an error: every Postgres function it
 * emits is a scalar the catalogue knows as total (postgres/facts.ts), so `SAFE.f` is `f`.
 */
export function safeWhereTotal(entries: Readonly<Record<string, FunctionDef>>): Readonly<Record<string, FunctionDef>> {
  const total = (d: FunctionDef): boolean => Object.values(d.emits).every((f) => f.kind === 'scalar' && !f.mayFail);
  return Object.fromEntries(Object.entries(entries).map(([name, d]) => [name, d.safe || !total(d) ? d : defWith(d, { safe: 'same' })]));
}
