/**
 * What every entry of the function table is built with: `def` (arity, emitted Postgres functions,
 * builder), `fn` (one typed call), `windowed` (may / must take OVER). functions.ts and the
 * category files of library/ share them; they live here, not in functions.ts, because functions.ts
 * imports the category files and they must be defined before those are evaluated.
 */
import type { CallSite, Emits, FunctionDef } from '../functions.js';
import { SqlLimitError, SqlUnsupportedError } from '../errors.js';
import type { Expr } from '../ast/expressions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { typed, type BqType, type Typed } from '../types.js';

export const def = (
  min: number,
  max: number,
  emits: Emits,
  build: FunctionDef['build'],
  aggregate?: FunctionDef['aggregate'],
): FunctionDef => Object.freeze({ min, max, emits, build, aggregate });

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
