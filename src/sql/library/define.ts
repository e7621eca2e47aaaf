/**
 * What every entry of the function table is built with: `def` (arity, emitted Postgres functions,
 * builder), `fn` (one typed call), `windowed` (may / must take OVER). functions.ts and the
 * category files of library/ share them; they live here, not in functions.ts, because functions.ts
 * imports the category files and they must be defined before those are evaluated.
 */
import type { CallSite, Emits, FunctionDef } from '../functions.js';
import { SqlUnsupportedError } from '../errors.js';
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
