/**
 * The helpers every entry of the function table is built with (src/sql/functions.ts and the
 * category files beside this one): an entry, a typed Postgres call, the resolved arguments.
 */
import type { CallSite, Emits, FunctionDef } from '../functions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { SqlSyntaxError } from '../errors.js';
import { isNumeric, isScalar, scalar, typed, type BqType, type Typed } from '../types.js';

export const def = (
  min: number,
  max: number,
  emits: Emits,
  build: FunctionDef['build'],
  aggregate?: FunctionDef['aggregate'],
): FunctionDef => Object.freeze({ min, max, emits, build, aggregate });

/** An entry with more to say than `def` takes: named arguments (`params`), its `SAFE.` form. */
export const defWith = (d: FunctionDef, extra: Pick<FunctionDef, 'params' | 'safe'>): FunctionDef => Object.freeze({ ...d, ...extra });

export const fn = (name: string, args: PgExpr[], type: BqType): Typed => typed(pg.func(name, args), type);

export function args(site: CallSite): Typed[] {
  return site.call.args.map((_, i) => site.arg(i));
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
