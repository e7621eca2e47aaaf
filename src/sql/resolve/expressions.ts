/** Expressions: one resolver per syntax node kind, building typed Postgres expressions. */
import { intervalRangeLiteral } from './intervalRange.js';
import type * as E from '../ast/expressions.js';
import { adapt, asText, castTo, compared, commonType, fromJsonText, unify, unifyAll } from '../coerce.js';
import { SqlNameError, SqlSyntaxError, SqlUnsupportedError, didYouMean } from '../errors.js';
import { FUNCTIONS, type CallSite, type FunctionDef } from '../functions.js';
import { offsetOf } from '../library/arrays.js';
import { takesOver } from '../postgres/functions.js';
import { pg, type PgExpr, type PgFrameBound, type PgOrder, type PgWindow } from '../postgres/ast.js';
import { mapChildren, some } from '../postgres/transform.js';
import { buildStruct } from './structs.js';
import {
  BOOL,
  FLOAT64,
  INT64,
  NULL_TYPE,
  STRING,
  isNumeric,
  isScalar,
  rangeElement,
  scalar,
  typeName,
  typed,
  type BqType,
  type ScalarName,
  type Typed,
} from '../types.js';
import { pgTypeOf } from '../coerce.js';
import { TAKES_RANGES } from '../library/ranges.js';
import { fieldOf, nameResolves, resolveName } from './names.js';
import type { Context, Scope } from './scope.js';
import { likeTest } from '../postgres/search.js';

const INTERVAL_UNITS: Readonly<Record<string, [number, string]>> = {
  MICROSECOND: [1, 'microseconds'],
  MILLISECOND: [1, 'milliseconds'],
  SECOND: [1, 'seconds'],
  MINUTE: [1, 'minutes'],
  HOUR: [1, 'hours'],
  DAY: [1, 'days'],
  WEEK: [1, 'weeks'],
  MONTH: [1, 'months'],
  QUARTER: [3, 'months'],
  YEAR: [1, 'years'],
};

const TIME_PARTS = new Set(['HOUR', 'MINUTE', 'SECOND', 'MILLISECOND', 'MICROSECOND']);

const EXTRACT_PARTS: Readonly<Record<string, (ts: PgExpr) => PgExpr>> = {
  YEAR: (ts) => pg.extract('year', ts),
  MONTH: (ts) => pg.extract('month', ts),
  DAY: (ts) => pg.extract('day', ts),
  HOUR: (ts) => pg.extract('hour', ts),
  MINUTE: (ts) => pg.extract('minute', ts),
  QUARTER: (ts) => pg.extract('quarter', ts),
  DAYOFYEAR: (ts) => pg.extract('doy', ts),
  ISOWEEK: (ts) => pg.extract('week', ts),
  ISOYEAR: (ts) => pg.extract('isoyear', ts),
  // BigQuery numbers days from Sunday = 1; Postgres' dow from Sunday = 0.
  DAYOFWEEK: (ts) => pg.op('+', pg.extract('dow', ts), pg.number('1')),
  SECOND: (ts) => pg.func('floor', [pg.extract('second', ts)]),
  // BigQuery's sub-second parts are within the second; Postgres' include the seconds.
  MILLISECOND: (ts) => pg.func('mod', [pg.func('floor', [pg.extract('milliseconds', ts)]), pg.number('1000')]),
  MICROSECOND: (ts) => pg.func('mod', [pg.func('floor', [pg.extract('microseconds', ts)]), pg.number('1000000')]),
  ...Object.fromEntries(
    ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'].map((day, k) => [
      `WEEK(${day})`,
      (ts: PgExpr) => weekNumber(ts, k),
    ]),
  ),
  WEEK: (ts) => weekNumber(ts, 0),
};

/**
 * BigQuery's WEEK / WEEK(<WEEKDAY>) number: weeks start on `weekday` (0 = Sunday), and the days
 * before the year's first such day are week 0: floor((doy - 1 - days back to the weekday + 7) / 7).
 */
function weekNumber(ts: PgExpr, weekday: number): PgExpr {
  const back = pg.func('mod', [pg.op('+', pg.op('-', pg.extract('dow', ts), pg.number(String(weekday))), pg.number('7')), pg.number('7')]);
  return pg.func('floor', [
    pg.op('/', pg.op('+', pg.op('-', pg.op('-', pg.extract('doy', ts), pg.number('1')), back), pg.number('7')), pg.number('7')),
  ]);
}

type ExprResolver<K extends E.ExprKind> = (e: Extract<E.Expr, { kind: K }>, scope: Scope, ctx: Context) => Typed;

const EXPR_RESOLVERS: { [K in E.ExprKind]: ExprResolver<K> } = {
  literal: (e) => {
    switch (e.type) {
      case 'STRING':
        return typed(pg.literal(e.value), STRING, { literal: e.value as string });
      case 'INT64':
        return typed(pg.number(BigInt(e.value as string).toString()), INT64);
      case 'FLOAT64':
        return typed(pg.cast(pg.number(e.value as string), 'float8'), FLOAT64);
      case 'BOOL':
        return typed(pg.literal(e.value), BOOL);
      case 'NULL':
        return typed(pg.literal(null), NULL_TYPE);
    }
  },
  param: (e, _scope, ctx) => typed(pg.param(ctx.translation.parameter(e.name)), STRING, { param: true }),
  path: (e, scope, ctx) => resolveName(e.parts, e.pos, scope, ctx),
  field: (e, scope, ctx) => fieldOf(resolveExpr(e.base, scope, ctx), e.name, ctx, e.pos),
  subscript: (e, scope, ctx) => resolveSubscript(e, scope, ctx),
  unary: (e, scope, ctx) => {
    const v = resolveExpr(e.operand, scope, ctx);
    if (rangeElement(v.type)) throw new SqlSyntaxError(`no operator ${e.op} for ${typeName(v.type)}`, ctx.text, e.pos);
    if (e.op === 'NOT') return typed(pg.not(v.sql), BOOL);
    if (e.op === '+') return v;
    return typed(pg.neg(adapt(v, INT64).sql), v.param ? INT64 : v.type);
  },
  binary: (e, scope, ctx) => resolveBinary(e, scope, ctx),
  logical: (e, scope, ctx) => {
    const operands = e.operands.map((o) => expectBool(resolveExpr(o, scope, ctx), ctx, o.pos));
    return typed(e.op === 'AND' ? pg.and(...operands) : pg.or(...operands), BOOL);
  },
  is: (e, scope, ctx) => typed(pg.is(resolveExpr(e.operand, scope, ctx).sql, e.test, e.negated), BOOL),
  between: (e, scope, ctx) => {
    const v = resolveExpr(e.operand, scope, ctx);
    const [a, low] = compared(v, resolveExpr(e.low, scope, ctx), 'BETWEEN', ctx.text, e.pos);
    const [, high] = compared(a, resolveExpr(e.high, scope, ctx), 'BETWEEN', ctx.text, e.pos);
    return typed({ kind: 'between', operand: a.sql, low: low.sql, high: high.sql, negated: e.negated }, BOOL);
  },
  like: (e, scope, ctx) => {
    const v = asText(resolveExpr(e.operand, scope, ctx));
    return typed(likeTest(v, asText(resolveExpr(e.pattern, scope, ctx)), e.negated), BOOL);
  },
  inList: (e, scope, ctx) => {
    let v = resolveExpr(e.operand, scope, ctx);
    const list = e.list.map((item) => {
      const [a, b] = compared(v, resolveExpr(item, scope, ctx), 'IN', ctx.text, item.pos);
      v = a;
      return b.sql;
    });
    return typed({ kind: 'in', operand: v.sql, list, negated: e.negated }, BOOL);
  },
  inQuery: (e, scope, ctx) => {
    const v = resolveExpr(e.operand, scope, ctx);
    const r = ctx.resolveQuery(e.query, ctx, scope);
    if (r.columns.length !== 1) throw new SqlSyntaxError('IN (subquery) needs a subquery with one column', ctx.text, e.query.pos);
    return typed({ kind: 'in', operand: adapt(v, r.columns[0].type).sql, query: r.query, negated: e.negated }, BOOL);
  },
  case: (e, scope, ctx) => {
    const operand = e.operand && resolveExpr(e.operand, scope, ctx);
    const conditions = e.whens.map((w) => resolveExpr(w.when, scope, ctx));
    const results = unifyAll(
      [...e.whens.map((w) => resolveExpr(w.then, scope, ctx)), ...(e.otherwise ? [resolveExpr(e.otherwise, scope, ctx)] : [])],
      ctx.text,
      e.pos,
    );
    const whens = conditions.map((c, i) => ({
      when: operand ? compared(operand, c, '=', ctx.text, e.whens[i].when.pos)[1].sql : expectBool(c, ctx, e.whens[i].when.pos),
      then: results[i].sql,
    }));
    const node = pg.case(whens, e.otherwise ? results[results.length - 1].sql : undefined, operand && unify(operand, conditions[0])[0].sql);
    return typed(node, commonType(results));
  },
  cast: (e, scope, ctx) => castTo(resolveExpr(e.operand, scope, ctx), e.type, e.safe, ctx.text, e.pos),
  call: (e, scope, ctx) => resolveCall(e, scope, ctx),
  extract: (e, scope, ctx) => {
    const v = resolveExpr(e.operand, scope, ctx);
    // From a TIMESTAMP BigQuery extracts in UTC, or in the zone named; timezone() makes that independent of the session zone.
    const zone = e.zone ? asText(resolveExpr(e.zone, scope, ctx)) : pg.literal('UTC');
    const wall = isScalar(v.type, 'TIMESTAMP') ? pg.atZone(zone, v.sql) : v.sql;
    if (rangeElement(v.type))
      throw new SqlSyntaxError(
        `EXTRACT(${e.part} FROM …) takes a date or time, not a ${typeName(v.type)}; use RANGE_START / RANGE_END`,
        ctx.text,
        e.pos,
      );
    // A TIME has only the parts of a time of day, as in BigQuery.
    if (isScalar(v.type, 'TIME') && !TIME_PARTS.has(e.part))
      throw new SqlSyntaxError(`EXTRACT(${e.part} FROM …) takes a DATE, DATETIME or TIMESTAMP, not a TIME`, ctx.text, e.pos);
    if (e.part === 'DATE') return typed(pg.cast(wall, 'date'), scalar('DATE'));
    if (e.part === 'DATETIME') return typed(pg.cast(wall, 'timestamp'), scalar('DATETIME'));
    const part = EXTRACT_PARTS[e.part];
    if (!part) throw new SqlUnsupportedError(`EXTRACT(${e.part} …) is not supported`, ctx.text, e.pos);
    return typed(pg.cast(part(wall), 'bigint'), INT64);
  },
  interval: (e, scope, ctx) => {
    if (e.toUnit !== undefined) {
      if (e.value.kind !== 'literal' || e.value.type !== 'STRING')
        throw new SqlSyntaxError(`INTERVAL … ${e.unit} TO ${e.toUnit} takes a string literal`, ctx.text, e.pos);
      const literal = intervalRangeLiteral(String(e.value.value), e.unit, e.toUnit, ctx.text, e.pos);
      return typed(pg.cast(pg.literal(literal), 'interval'), scalar('INTERVAL'));
    }
    const unit = INTERVAL_UNITS[e.unit];
    if (!unit) throw new SqlUnsupportedError(`INTERVAL unit ${e.unit} is not supported`, ctx.text, e.pos);
    const [factor, name] = unit;
    if (e.value.kind === 'literal' && e.value.type === 'INT64') {
      return typed(pg.cast(pg.literal(`${Number(e.value.value) * factor} ${name}`), 'interval'), scalar('INTERVAL'));
    }
    const n = adapt(resolveExpr(e.value, scope, ctx), INT64);
    return typed(pg.op('*', pg.cast(n.sql, 'float8'), pg.cast(pg.literal(`${factor} ${name}`), 'interval')), scalar('INTERVAL'));
  },
  subquery: (e, scope, ctx) => {
    ctx.translation.scalarSubqueries++;
    const r = ctx.resolveQuery(e.query, ctx, scope);
    if (r.columns.length !== 1) throw new SqlSyntaxError('a scalar subquery must return one column', ctx.text, e.pos);
    return typed(pg.subquery(r.query), r.columns[0].type);
  },
  exists: (e, scope, ctx) => typed(pg.subquery(ctx.resolveQuery(e.query, ctx, scope).query, true), BOOL),
  struct: (e, scope, ctx) => resolveStruct(e, scope, ctx),
  arrayLiteral: (e, scope, ctx) => resolveArrayLiteral(e, scope, ctx),
  arraySubquery: (e, scope, ctx) => resolveArraySubquery(e, scope, ctx),
  inUnnest: (e, scope, ctx) => resolveInUnnest(e, scope, ctx),
};

// ── STRUCT and arrays ─────────────────────────────────────────────────────

/** A value brought to a declared type (`STRUCT<x INT64>(…)`, `ARRAY<STRING>[…]`): scalars are cast, STRUCTs and arrays kept. */
function toDeclared(v: Typed, spec: E.TypeSpec, ctx: Context, pos: number): Typed {
  if (spec.kind === 'scalar') {
    if (isScalar(v.type, spec.name)) return v;
    return castTo(v, spec.name, false, ctx.text, pos);
  }
  const ok =
    spec.kind === 'struct' ? v.type.kind === 'record' || isScalar(v.type, 'NULL') : v.type.kind !== 'scalar' || isScalar(v.type, 'NULL');
  if (!ok) throw new SqlSyntaxError(`expected ${spec.kind === 'struct' ? 'a STRUCT' : 'an ARRAY'} value`, ctx.text, pos);
  return v;
}

function resolveStruct(e: E.Struct, scope: Scope, ctx: Context, names?: readonly string[]): Typed {
  const fields: { name: string; value: Typed }[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < e.fields.length; i++) {
    const f = e.fields[i];
    const declared = e.types?.[i];
    let value = resolveExpr(f.expr, scope, ctx);
    if (declared) value = toDeclared(value, declared.type, ctx, f.expr.pos);
    // Names as BigQuery infers them: declared, then `AS`, then a path's last part; unnamed fields are _field_1, _field_2, …
    const implicit = f.expr.kind === 'path' ? f.expr.parts[f.expr.parts.length - 1] : f.expr.kind === 'field' ? f.expr.name : undefined;
    const name = names?.[i] ?? declared?.name ?? f.name ?? implicit ?? `_field_${i + 1}`;
    const key = name.toLowerCase();
    if (seen.has(key))
      throw new SqlUnsupportedError(
        `STRUCT field name ${name} is used twice; STRUCTs are JSON objects here, so field names must differ`,
        ctx.text,
        f.expr.pos,
      );
    seen.add(key);
    fields.push({ name, value });
  }
  return buildStruct(fields);
}

/** `[a, b]`: a Postgres array of scalars, or a jsonb array of STRUCTs. */
function resolveArrayLiteral(e: E.ArrayLiteral, scope: Scope, ctx: Context): Typed {
  // The elements' type is the first's: later STRUCTs take its field names by position (`[STRUCT(1 AS x), (2)]`).
  let first: readonly string[] | undefined;
  let items = e.items.map((item) => {
    const v =
      item.kind === 'struct' && first && item.fields.length === first.length
        ? resolveStruct(item, scope, ctx, first)
        : resolveExpr(item, scope, ctx);
    if (!first && v.type.kind === 'record' && v.type.struct) first = v.type.struct.map((f) => f.name);
    return v;
  });
  if (e.element) items = items.map((v, i) => toDeclared(v, e.element!, ctx, e.items[i].pos));
  const record = items.find((v) => v.type.kind === 'record');
  if (record || e.element?.kind === 'struct') {
    const bad = items.findIndex((v) => v.type.kind !== 'record' && !isScalar(v.type, 'NULL'));
    if (bad >= 0) throw new SqlSyntaxError('array elements must have one type: this one is not a STRUCT', ctx.text, e.items[bad].pos);
    // jsonb_build_array takes up to 100 arguments; longer arrays are concatenated (jsonb || jsonb appends arrays).
    let sql: PgExpr | undefined;
    for (let k = 0; k < items.length || k === 0; k += 100) {
      const call = pg.func(
        'jsonb_build_array',
        items.slice(k, k + 100).map((v) => v.sql),
      );
      sql = sql ? pg.op('||', sql, call) : call;
    }
    return typed(sql!, { kind: 'jsonArray', element: record?.type ?? { kind: 'record', struct: [] }, single: false });
  }
  const nested = items.findIndex((v) => v.type.kind !== 'scalar');
  if (nested >= 0) throw new SqlUnsupportedError('arrays of arrays are not supported (nor by BigQuery)', ctx.text, e.items[nested].pos);
  items = unifyAll(items, ctx.text, e.pos);
  const elementType = e.element?.kind === 'scalar' ? scalar(e.element.name) : commonType(items);
  const pgType = pgTypeOf(isScalar(elementType, 'NULL') ? INT64 : elementType);
  if (!items.length) {
    // An empty array of the element type, without an array type name (wall 2 allows none): a slice of nothing.
    return typed(pg.slice(pg.array([pg.cast(pg.literal(null), pgType)]), pg.number('1'), pg.number('0')), {
      kind: 'array',
      element: elementType,
    });
  }
  // The first element typed (literals would make `integer[]`), so the array has the element type.
  const sql = items.map((v, i) => (i === 0 ? pg.cast(v.sql, pgType) : v.sql));
  return typed(pg.array(sql), { kind: 'array', element: elementType });
}

/**
 * `ARRAY(SELECT x …)`: `(SELECT coalesce(array_agg(q.x), <empty>) FROM (…) AS q)`. An empty
 * result is an empty array, as in BigQuery; the subquery's ORDER BY orders the elements (array_agg
 * reads an ordered derived table in its order).
 */
function resolveArraySubquery(e: E.ArraySubquery, scope: Scope, ctx: Context): Typed {
  const r = ctx.resolveQuery(e.query, ctx, scope);
  if (r.columns.length !== 1) throw new SqlSyntaxError('ARRAY(subquery) needs a subquery with one column', ctx.text, e.query.pos);
  const column = r.columns[0];
  if (column.type.kind === 'array' || column.type.kind === 'jsonArray')
    throw new SqlUnsupportedError('arrays of arrays are not supported (nor by BigQuery)', ctx.text, e.pos);
  const alias = ctx.translation.alias();
  const value = pg.column(alias, column.name);
  const json = column.type.kind === 'record';
  const pgType = pgTypeOf(isScalar(column.type, 'NULL') ? INT64 : column.type);
  const empty = json
    ? pg.cast(pg.literal('[]'), 'jsonb')
    : pg.slice(pg.array([pg.cast(pg.literal(null), pgType)]), pg.number('1'), pg.number('0'));
  const agg = pg.func('coalesce', [pg.func(json ? 'jsonb_agg' : 'array_agg', [value]), empty]);
  const query = pg.selectOne(agg, column.name, { kind: 'derived', query: r.query, alias });
  const type: BqType = json ? { kind: 'jsonArray', element: column.type, single: false } : { kind: 'array', element: column.type };
  return typed(pg.subquery(query), type);
}

/** `x IN UNNEST(arr)`: `x = ANY (arr)` on a Postgres array; on a JSON array, `x IN (SELECT element …)`. */
function resolveInUnnest(e: E.InUnnest, scope: Scope, ctx: Context): Typed {
  const v = resolveExpr(e.operand, scope, ctx);
  const array = resolveExpr(e.array, scope, ctx);
  if (array.type.kind === 'array') {
    const operand = adapt(v, array.type.element);
    return typed({ kind: 'any', operand: operand.sql, array: array.sql, negated: e.negated }, BOOL);
  }
  if (array.type.kind === 'jsonArray' && array.type.element.kind === 'scalar') {
    const alias = ctx.translation.alias();
    const element = fromJsonText(pg.column(alias, 'value'), array.type.element);
    const [operand, item] = compared(v, element, 'IN', ctx.text, e.pos);
    const arg = pg.case([{ when: pg.op('=', pg.func('jsonb_typeof', [array.sql]), pg.literal('array')), then: array.sql }]);
    const query = pg.selectOne(item.sql, 'value', { kind: 'function', fn: 'jsonb_array_elements_text', arg, alias, column: 'value' });
    return typed({ kind: 'in', operand: operand.sql, query, negated: e.negated }, BOOL);
  }
  if (isScalar(array.type, 'NULL')) return typed(pg.literal(false), BOOL);
  throw new SqlUnsupportedError('IN UNNEST needs an array of scalar values', ctx.text, e.array.pos);
}

// ── window functions ──────────────────────────────────────────────────────

const isWindowCall = (e: PgExpr): boolean => e.kind === 'func' && e.over !== undefined;

/** Whether a resolved expression calls a window function (outside subqueries). */
export function hasWindow(e: PgExpr): boolean {
  return some(e, isWindowCall);
}

/** The first window call of a syntax tree outside subqueries, to point an error at it. */
export function findWindowCall(node: unknown): E.Call | undefined {
  if (Array.isArray(node)) {
    for (const item of node) {
      const found = findWindowCall(item);
      if (found) return found;
    }
    return undefined;
  }
  if (node === null || typeof node !== 'object') return undefined;
  const n = node as { kind?: string; over?: unknown };
  if (n.kind === 'query') return undefined;
  if (n.kind === 'call' && n.over) return node as E.Call;
  for (const value of Object.values(node)) {
    const found = findWindowCall(value);
    if (found) return found;
  }
  return undefined;
}

function resolveWindow(w: E.WindowSpec, scope: Scope, ctx: Context): PgWindow {
  const partitionBy = w.partitionBy.map((p) => resolveExpr(p, scope, ctx).sql);
  // BigQuery sorts NULLs first ascending and last descending; Postgres the other way round.
  const orderBy: PgOrder[] = w.orderBy.map((o) => ({
    expr: resolveExpr(o.expr, scope, ctx).sql,
    desc: o.desc,
    nulls: o.nulls ?? (o.desc ? 'LAST' : 'FIRST'),
  }));
  if (!w.frame) return { partitionBy, orderBy };
  const bound = (b: E.FrameBound): PgFrameBound => {
    if (!b.offset) return { kind: b.kind };
    if (b.offset.kind === 'literal' && b.offset.type === 'INT64')
      return { kind: b.kind, offset: pg.number(String(Number(b.offset.value))) };
    if (b.offset.kind === 'param') return { kind: b.kind, offset: pg.cast(pg.param(ctx.translation.parameter(b.offset.name)), 'bigint') };
    throw new SqlUnsupportedError('a window frame offset must be a non-negative integer literal or a parameter', ctx.text, b.offset.pos);
  };
  const start = bound(w.frame.start);
  const end: PgFrameBound = w.frame.end ? bound(w.frame.end) : { kind: 'CURRENT ROW' };
  if (start.kind === 'UNBOUNDED FOLLOWING' || end.kind === 'UNBOUNDED PRECEDING')
    throw new SqlSyntaxError('invalid window frame', ctx.text, w.frame.start.pos);
  return { partitionBy, orderBy, frame: { unit: w.frame.unit, start, end } };
}

/** `built` with `over` attached to its first window-capable Postgres call (`sum` under the `::bigint` cast, `count` of countif, …). */
function attachWindow(built: PgExpr, over: PgWindow): PgExpr | undefined {
  if (built.kind === 'func' && takesOver(built.name)) return { ...built, over };
  let attached: PgExpr | undefined;
  const rebuilt = mapChildren(built, (child) => {
    if (attached) return child;
    const c = attachWindow(child, over);
    if (c) attached = c;
    return c ?? child;
  });
  return attached && rebuilt;
}

export function resolveExpr(e: E.Expr, scope: Scope, ctx: Context): Typed {
  return (EXPR_RESOLVERS[e.kind] as ExprResolver<E.ExprKind>)(e, scope, ctx);
}

export function expectBool(v: Typed, ctx: Context, pos: number): PgExpr {
  if (v.type.kind !== 'scalar' || !['BOOL', 'NULL'].includes(v.type.name)) {
    if (v.type.kind === 'scalar' && v.type.loose) return pg.cast(v.sql, 'boolean');
    throw new SqlSyntaxError(
      `expected a BOOL condition, got ${v.type.kind === 'scalar' ? v.type.name : 'a record or array'}`,
      ctx.text,
      pos,
    );
  }
  return v.sql;
}

const ARITHMETIC = new Set(['+', '-', '*', '/']);

function resolveBinary(e: E.Binary, scope: Scope, ctx: Context): Typed {
  let left = resolveExpr(e.left, scope, ctx);
  let right = resolveExpr(e.right, scope, ctx);
  if (e.op === '||') return typed(pg.op('||', asText(left), asText(right)), STRING);
  if (!ARITHMETIC.has(e.op)) {
    [left, right] = compared(left, right, e.op, ctx.text, e.pos);
    return typed(pg.op(e.op === '!=' ? '<>' : e.op, left.sql, right.sql), BOOL);
  }
  // BigQuery's RANGE takes no arithmetic operator (Postgres' `+`, `-`, `*` of ranges are union, difference, intersection).
  for (const v of [left, right])
    if (rangeElement(v.type))
      throw new SqlSyntaxError(`no operator ${e.op} for ${typeName(v.type)}: a RANGE takes no arithmetic`, ctx.text, e.pos);
  // Arithmetic: text parameters and untyped leaves become numbers.
  left = adapt(left, isNumeric(right.type) ? right.type : INT64);
  right = adapt(right, isNumeric(left.type) ? left.type : INT64);
  const type = arithmeticType(e.op, left.type, right.type);
  if (e.op === '/' && isScalar(type, 'FLOAT64')) {
    // BigQuery's `/` always divides as floating point: 7 / 2 = 3.5.
    return typed(pg.op('/', pg.cast(left.sql, 'float8'), right.sql), FLOAT64);
  }
  return typed(pg.op(e.op, left.sql, right.sql), type);
}

function arithmeticType(op: string, a: BqType, b: BqType): BqType {
  const x: ScalarName | undefined = a.kind === 'scalar' ? a.name : undefined;
  const y: ScalarName | undefined = b.kind === 'scalar' ? b.name : undefined;
  if (x === 'TIMESTAMP' || y === 'TIMESTAMP') return scalar('TIMESTAMP');
  if (x === 'DATETIME' || y === 'DATETIME') return scalar('DATETIME');
  if (x === 'DATE' || y === 'DATE') return scalar('DATE');
  if (x === 'INTERVAL' && y === 'INTERVAL') return scalar('INTERVAL');
  if (x === 'FLOAT64' || y === 'FLOAT64') return FLOAT64;
  if (x === 'NUMERIC' || y === 'NUMERIC') return scalar('NUMERIC');
  return op === '/' ? FLOAT64 : INT64;
}

/** `arr[OFFSET(n)]` on an array, or `dates[0]`: a one-column CTE indexed like an array. */
function resolveSubscript(e: E.Subscript, scope: Scope, ctx: Context): Typed {
  const index = adapt(resolveExpr(e.index, scope, ctx), INT64).sql;
  const zeroBased = e.mode === 'OFFSET' || e.mode === 'SAFE_OFFSET' ? index : pg.op('-', index, pg.number('1'));
  if (e.base.kind === 'path' && e.base.parts.length === 1 && !nameResolves(e.base.parts[0], scope)) {
    const cte = ctx.ctes.get(e.base.parts[0].toLowerCase());
    if (cte) {
      if (cte.columns.length !== 1)
        throw new SqlSyntaxError(`${cte.name}[…] needs a CTE with one column; ${cte.name} has ${cte.columns.length}`, ctx.text, e.pos);
      const alias = ctx.translation.alias();
      const column = cte.columns[0];
      const query = pg.selectOne(
        pg.column(alias, column.name),
        column.name,
        { kind: 'table', name: cte.name, alias },
        {
          limit: pg.number('1'),
          offset: zeroBased,
        },
      );
      return typed(pg.subquery(query), column.type);
    }
  }
  const base = resolveExpr(e.base, scope, ctx);
  if (base.type.kind === 'array') {
    // OFFSET / ORDINAL out of range fail, as in BigQuery; SAFE_ ones are a plain subscript (NULL out of range).
    if (e.mode === 'OFFSET' || e.mode === 'ORDINAL') return typed(offsetOf(base.sql, zeroBased), base.type.element);
    return typed(pg.subscript(base.sql, pg.op('+', zeroBased, pg.number('1'))), base.type.element);
  }
  if (base.type.kind === 'jsonArray') {
    // jsonb's -> and ->> take an integer position, not bigint.
    const position = pg.cast(zeroBased, 'integer');
    if (base.type.element.kind !== 'scalar') return typed(pg.op('->', base.sql, position), base.type.element);
    return fromJsonText(pg.op('->>', base.sql, position), base.type.element);
  }
  throw new SqlSyntaxError('only arrays can be indexed with [OFFSET(n)]', ctx.text, e.pos);
}

function resolveCall(call: E.Call, scope: Scope, ctx: Context): Typed {
  const fn = Object.prototype.hasOwnProperty.call(FUNCTIONS, call.name) ? FUNCTIONS[call.name] : undefined;
  if (!fn) throw new SqlNameError(`unknown function ${call.name}${didYouMean(call.name, Object.keys(FUNCTIONS))}`, ctx.text, call.pos);
  const e = call.argNames ? positionalCall(call, fn, ctx) : call;
  if (e.safe && !fn.safe)
    throw new SqlUnsupportedError(
      `SAFE.${e.name.toUpperCase()} is not supported (only for scalar functions that can fail)`,
      ctx.text,
      e.pos,
    );
  const n = e.args.length;
  if (n < fn.min || n > fn.max || (e.star && e.name !== 'count')) {
    const range = fn.min === fn.max ? `${fn.min}` : `${fn.min} to ${fn.max}`;
    throw new SqlSyntaxError(
      `${e.name.toUpperCase()} takes ${range} argument${fn.max === 1 ? '' : 's'}, got ${e.star ? '*' : n}`,
      ctx.text,
      e.pos,
    );
  }
  if (e.distinct && !fn.aggregate?.distinct)
    throw new SqlUnsupportedError(`${e.name.toUpperCase()}(DISTINCT …) is not supported`, ctx.text, e.pos);
  if ((e.orderBy.length || e.limit) && !fn.aggregate?.orderBy)
    throw new SqlUnsupportedError(`${e.name.toUpperCase()}(… ORDER BY / LIMIT) is not supported`, ctx.text, e.pos);
  if (e.nulls && !fn.nulls) throw new SqlSyntaxError(`${e.name.toUpperCase()} does not take ${e.nulls} NULLS`, ctx.text, e.pos);
  if (e.over || fn.window?.kind === 'function') return resolveWindowCall(e, fn, scope, ctx);
  const site = new ResolvingCallSite(e, scope, ctx);
  const built = e.safe && fn.safe !== 'same' ? fn.safe!(site) : fn.build(site);
  if (fn.window && hasWindow(built.sql))
    throw new SqlSyntaxError(`an aggregate ${e.name.toUpperCase()} cannot contain a window function`, ctx.text, e.pos);
  return built;
}

/** `f(a, name => b)`: named arguments put in their places by the function's `params`; no gaps. */
function positionalCall(e: E.Call, fn: FunctionDef, ctx: Context): E.Call {
  const params = fn.params ?? [];
  const args: E.Expr[] = [];
  const named: Record<string, E.Expr> = {};
  e.args.forEach((arg, k) => {
    const name = e.argNames![k];
    if (name !== undefined && fn.named?.includes(name)) {
      if (named[name]) throw new SqlSyntaxError(`argument ${name} of ${e.name.toUpperCase()} is given twice`, ctx.text, arg.pos);
      named[name] = arg;
      return;
    }
    const at = name === undefined ? k : params.indexOf(name);
    if (at < 0)
      throw new SqlSyntaxError(
        `${e.name.toUpperCase()} has no argument named ${name}${params.length || fn.named?.length ? ` (it has ${[...params, ...(fn.named ?? [])].join(', ')})` : ''}`,
        ctx.text,
        arg.pos,
      );
    if (args[at] !== undefined)
      throw new SqlSyntaxError(`argument ${params[at] ?? at + 1} of ${e.name.toUpperCase()} is given twice`, ctx.text, arg.pos);
    args[at] = arg;
  });
  const gap = Array.from(args, (a) => a).findIndex((a) => a === undefined);
  if (gap >= 0)
    throw new SqlUnsupportedError(`${e.name.toUpperCase()} needs argument ${params[gap]} when a later one is named`, ctx.text, e.pos);
  return { ...e, args, argNames: undefined, named };
}

function resolveWindowCall(e: E.Call, fn: (typeof FUNCTIONS)[string], scope: Scope, ctx: Context): Typed {
  const name = e.name.toUpperCase();
  if (!fn.window)
    throw new SqlSyntaxError(`${name} is not a window function or aggregate, so it takes no OVER clause`, ctx.text, e.over!.pos);
  if (!e.over) throw new SqlSyntaxError(`${name} is a window function: it needs an OVER clause`, ctx.text, e.pos);
  if (e.distinct)
    throw new SqlUnsupportedError(
      `${name}(DISTINCT …) OVER (…) is not supported (Postgres has no DISTINCT window aggregates)`,
      ctx.text,
      e.pos,
    );
  if (e.orderBy.length || e.limit) throw new SqlSyntaxError(`${name}(… ORDER BY / LIMIT) cannot be used with OVER`, ctx.text, e.pos);
  if (fn.window.orderBy === 'required' && !e.over.orderBy.length)
    throw new SqlSyntaxError(`${name} needs ORDER BY in its OVER clause`, ctx.text, e.over.pos);
  if (fn.window.orderBy === 'forbidden' && e.over.orderBy.length)
    throw new SqlSyntaxError(`${name} takes no ORDER BY in its OVER clause`, ctx.text, e.over.pos);
  if (!fn.window.frame && e.over.frame)
    throw new SqlSyntaxError(`${name} does not take a window frame (ROWS / RANGE)`, ctx.text, e.over.pos);
  const site = new ResolvingCallSite(e, scope, ctx);
  const built = e.safe && fn.safe !== 'same' ? fn.safe!(site) : fn.build(site);
  if (hasWindow(built.sql)) throw new SqlSyntaxError('window functions cannot be nested', ctx.text, e.pos);
  const over = resolveWindow(e.over, scope, ctx);
  const sql = attachWindow(built.sql, over);
  ctx.translation.windows++;
  if (!sql) throw new SqlUnsupportedError(`${name} cannot be used as a window function`, ctx.text, e.pos);
  return { ...built, sql };
}

/** Arguments resolved on demand: date-part words like `hour` are never resolved as names. */
class ResolvingCallSite implements CallSite {
  private readonly resolved: Typed[] = [];
  readonly text: string;

  constructor(
    readonly call: E.Call,
    private readonly scope: Scope,
    private readonly ctx: Context,
  ) {
    this.text = ctx.text;
  }

  arg(i: number): Typed {
    let v = this.resolved[i];
    if (v) return v;
    v = this.resolved[i] = resolveExpr(this.call.args[i], this.scope, this.ctx);
    // A RANGE reaches only the functions that take one (library/ranges.ts), never a Postgres function that would refuse it.
    if (rangeElement(v.type) && !TAKES_RANGES.has(this.call.name))
      throw new SqlSyntaxError(
        `${this.call.name.toUpperCase()} takes no RANGE, but argument ${i + 1} is a ${typeName(v.type)}`,
        this.text,
        this.call.args[i].pos,
      );
    return v;
  }

  word(i: number): string {
    const a = this.call.args[i];
    if (a.kind === 'path' && a.parts.length === 1) return a.parts[0].toUpperCase();
    throw new SqlSyntaxError('expected a date part such as HOUR or DAY', this.text, a.pos);
  }

  stringLiteral(i: number): string | undefined {
    const a = this.call.args[i];
    return a?.kind === 'literal' && a.type === 'STRING' ? (a.value as string) : undefined;
  }

  integerLiteral(i: number): number | undefined {
    const a = this.call.args[i];
    return a?.kind === 'literal' && a.type === 'INT64' ? Number(a.value) : undefined;
  }

  named(name: string): Typed | undefined {
    const e = this.call.named?.[name];
    return e && resolveExpr(e, this.scope, this.ctx);
  }

  orderBy(): PgOrder[] {
    return this.call.orderBy.map((o) => ({ expr: resolveExpr(o.expr, this.scope, this.ctx).sql, desc: o.desc }));
  }
}
