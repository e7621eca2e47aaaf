/**
 * The resolver: scopes, names and types. It walks the BigQuery syntax tree and builds the
 * Postgres tree, applying BigQuery semantics on the way (GROUP BY alias, float division,
 * JSON leaves typed from the source schema, UNNEST of single records read by path).
 *
 * It is also wall 1 of the sandbox: a table name must be a visible CTE, or a source when the
 * context allows sources; a function must be in FUNCTIONS.
 */
import type * as E from './ast/expressions.js';
import type * as F from './ast/from.js';
import type * as Q from './ast/queries.js';
import { adapt, asText, castTo, commonType, pgTypeOf, unify, unifyAll } from './coerce.js';
import { SqlNameError, SqlSandboxError, SqlSyntaxError, SqlUnsupportedError, didYouMean } from './errors.js';
import { FUNCTIONS, type CallSite } from './functions.js';
import { pg, type PgExpr, type PgFrom, type PgOrder, type PgQuery, type PgSelect } from './postgres/ast.js';
import { narrowAggregateInput } from './postgres/narrow.js';
import { BODY_COLUMN, FIXED_COLUMNS, METADATA_COLUMN, type FieldSchema, type SourceLookup, type SourceTable } from '../sources/schema.js';
import {
  BOOL, FLOAT64, INT64, LOOSE_JSON_LEAF, NULL_TYPE, STRING, fieldType, isNumeric, isScalar, scalar, typed,
  type BqType, type ScalarName, type Typed,
} from './types.js';

export interface Column { readonly name: string; readonly type: BqType }

/** A resolved query: its Postgres tree and its output columns. */
export interface Resolved { readonly query: PgQuery; readonly columns: readonly Column[] }

/** A CTE visible by name. */
interface CteBinding { readonly name: string; readonly columns: readonly Column[] }

/** State shared by one translation: parameter numbering and fresh aliases. */
export class TranslationState {
  readonly parameters: string[] = [];
  private aliases = 0;

  parameter(name: string): number {
    const i = this.parameters.indexOf(name);
    if (i >= 0) return i + 1;
    return this.parameters.push(name);
  }

  alias(): string {
    return `t${this.aliases++}`;
  }
}

/** Where names come from while resolving one piece of text. */
export interface Context {
  readonly translation: TranslationState;
  /** The text being resolved, for error positions (the endpoint query or the caller's sandboxed SQL). */
  readonly text: string;
  /** Sources may be read (endpoint text); undefined in sandboxed SQL, where only CTEs are tables. */
  readonly sources?: SourceLookup;
  readonly ctes: ReadonlyMap<string, CteBinding>;
}

type Range =
  | { readonly kind: 'source'; readonly names: readonly string[]; readonly alias: string; readonly source: SourceTable }
  | { readonly kind: 'relation'; readonly names: readonly string[]; readonly alias: string; readonly columns: readonly Column[] }
  | { readonly kind: 'value'; readonly names: readonly string[]; readonly value: Typed };

/** The names one SELECT sees: its FROM items, JOIN USING columns, and (HAVING, ORDER BY) its select aliases. */
export class Scope {
  constructor(
    readonly parent?: Scope,
    readonly ranges: Range[] = [],
    readonly using = new Set<string>(),
    /** Select-list aliases, consulted after every column: BigQuery lets HAVING and ORDER BY name them. */
    readonly aliases: readonly SelectTarget[] = [],
  ) {}

  withAliases(aliases: readonly SelectTarget[]): Scope {
    return new Scope(this.parent, this.ranges, this.using, aliases);
  }
}

/** Column names of the physical log tables, typed. */
const FIXED: ReadonlyMap<string, BqType> = new Map(Object.entries(FIXED_COLUMNS).map(([k, v]) => [k, scalar(v.type)]));

const INTERVAL_UNITS: Readonly<Record<string, [number, string]>> = {
  MICROSECOND: [1, 'microseconds'], MILLISECOND: [1, 'milliseconds'], SECOND: [1, 'seconds'], MINUTE: [1, 'minutes'], HOUR: [1, 'hours'],
  DAY: [1, 'days'], WEEK: [1, 'weeks'], MONTH: [1, 'months'], QUARTER: [3, 'months'], YEAR: [1, 'years'],
};

const EXTRACT_PARTS: Readonly<Record<string, (ts: PgExpr) => PgExpr>> = {
  YEAR: (ts) => pg.extract('year', ts), MONTH: (ts) => pg.extract('month', ts), DAY: (ts) => pg.extract('day', ts),
  HOUR: (ts) => pg.extract('hour', ts), MINUTE: (ts) => pg.extract('minute', ts), QUARTER: (ts) => pg.extract('quarter', ts),
  DAYOFYEAR: (ts) => pg.extract('doy', ts), ISOWEEK: (ts) => pg.extract('week', ts), ISOYEAR: (ts) => pg.extract('isoyear', ts),
  // BigQuery numbers days from Sunday = 1; Postgres' dow from Sunday = 0.
  DAYOFWEEK: (ts) => pg.op('+', pg.extract('dow', ts), pg.number('1')),
  SECOND: (ts) => pg.func('floor', [pg.extract('second', ts)]),
  // BigQuery's sub-second parts are within the second; Postgres' include the seconds.
  MILLISECOND: (ts) => pg.func('mod', [pg.func('floor', [pg.extract('milliseconds', ts)]), pg.number('1000')]),
  MICROSECOND: (ts) => pg.func('mod', [pg.func('floor', [pg.extract('microseconds', ts)]), pg.number('1000000')]),
};

// ── queries ──────────────────────────────────────────────────────────────────

/** Resolves a query; `parent` is the enclosing scope for correlated subqueries. */
export function resolveQuery(q: Q.Query, ctx: Context, parent?: Scope): Resolved {
  const { ctx: inner, ctes } = resolveCtes(q.ctes, ctx);
  const body = resolveBody(q.body, inner, parent);
  const orderBy = q.orderBy.map((o) => resolveOrder(o, body, inner));
  const limit = q.limit && resolveCount(q.limit, inner, 'LIMIT');
  const offset = q.offset && resolveCount(q.offset, inner, 'OFFSET');
  const query: PgQuery = { kind: 'query', ctes, body: body.pg, orderBy, limit, offset };
  return { query: narrowAggregateInput(query, () => ctx.translation.alias()), columns: body.columns };
}

/** WITH: each CTE sees the ones before it; names must be new in this query. */
export function resolveCtes(list: readonly Q.Cte[], ctx: Context, reserved: ReadonlySet<string> = new Set()): { ctx: Context; ctes: PgQuery['ctes'] } {
  if (!list.length) return { ctx, ctes: [] };
  const visible = new Map(ctx.ctes);
  const ctes: { name: string; query: PgQuery }[] = [];
  for (const cte of list) {
    const key = cte.name.toLowerCase();
    if (reserved.has(key)) throw new SqlSandboxError(`CTE ${cte.name} is already defined by the endpoint; choose another name`, ctx.text, cte.pos);
    if (ctes.some((c) => c.name.toLowerCase() === key)) throw new SqlNameError(`duplicate CTE name ${cte.name}`, ctx.text, cte.pos);
    const resolved = resolveQuery(cte.query, { ...ctx, ctes: visible });
    ctes.push({ name: cte.name, query: resolved.query });
    visible.set(key, { name: cte.name, columns: resolved.columns });
  }
  return { ctx: { ...ctx, ctes: visible }, ctes };
}

interface ResolvedBody {
  readonly pg: PgQuery['body'];
  readonly columns: readonly Column[];
  /** For ORDER BY on a plain SELECT: its FROM scope and select list. */
  readonly select?: { scope: Scope; items: readonly SelectTarget[] };
}

interface SelectTarget { readonly name: string; readonly value: Typed; readonly explicit: boolean }

const BODY_RESOLVERS: { [K in Q.QueryBodyKind]: (b: Extract<Q.QueryBody, { kind: K }>, ctx: Context, parent?: Scope) => ResolvedBody } = {
  select: (s, ctx, parent) => resolveSelect(s, ctx, parent),
  query: (q, ctx, parent) => {
    const r = resolveQuery(q, ctx, parent);
    return { pg: r.query, columns: r.columns };
  },
  setOp: (s, ctx, parent) => {
    const left = resolveBody(s.left, ctx, parent);
    const right = resolveBody(s.right, ctx, parent);
    if (left.columns.length !== right.columns.length) {
      throw new SqlSyntaxError(`UNION ALL operands have ${left.columns.length} and ${right.columns.length} columns`, ctx.text, s.pos);
    }
    return { pg: { kind: 'setOp', op: s.op === 'UNION ALL' ? 'UNION ALL' : 'UNION', left: left.pg, right: right.pg }, columns: left.columns };
  },
};

function resolveBody(b: Q.QueryBody, ctx: Context, parent?: Scope): ResolvedBody {
  return (BODY_RESOLVERS[b.kind] as (b: Q.QueryBody, ctx: Context, parent?: Scope) => ResolvedBody)(b, ctx, parent);
}

function resolveSelect(s: Q.Select, ctx: Context, parent?: Scope): ResolvedBody {
  const scope = new Scope(parent);
  const guards: PgExpr[] = [];
  const from = s.from && resolveFromItem(s.from, { left: undefined, type: 'COMMA', on: undefined, using: [], scope, ctx }, guards);
  const items = resolveSelectList(s.items, scope, ctx);
  const where = s.where && expectBool(resolveExpr(s.where, scope, ctx), ctx, s.where.pos);
  const groupBy = s.groupBy.map((g) => resolveGroupKey(g, items, scope, ctx));
  const having = s.having && resolveExpr(s.having, scope.withAliases(items), ctx).sql;
  const conditions = [...guards, ...(where ? [where] : [])];
  const select: PgSelect = {
    kind: 'select',
    distinct: s.distinct,
    targets: items.map((t) => ({ expr: t.value.sql, name: t.name })),
    from,
    where: conditions.length ? pg.and(...conditions) : undefined,
    groupBy,
    having,
  };
  return { pg: select, columns: items.map((t) => ({ name: t.name, type: t.value.type })), select: { scope, items } };
}

function resolveSelectList(list: readonly Q.SelectItem[], scope: Scope, ctx: Context): SelectTarget[] {
  const targets: SelectTarget[] = [];
  let anonymous = 0;
  for (const item of list) {
    if (item.kind === 'selectStar') {
      targets.push(...expandStar(item, scope, ctx));
      continue;
    }
    const value = resolveExpr(item.expr, scope, ctx);
    // BigQuery names an unaliased column after its last name part (`request.method` → method), else f0_, f1_, …
    const implicit = item.expr.kind === 'path' ? item.expr.parts[item.expr.parts.length - 1] : item.expr.kind === 'field' ? item.expr.name : undefined;
    const name = item.alias ?? implicit ?? `f${anonymous++}_`;
    targets.push({ name, value, explicit: item.alias !== undefined });
  }
  return targets;
}

function expandStar(item: Q.SelectStar, scope: Scope, ctx: Context): SelectTarget[] {
  let columns: { name: string; value: Typed }[];
  if (item.qualifier) {
    const base = resolvePath(item.qualifier, item.pos, scope, ctx, true);
    if (base.kind === 'range') columns = rangeColumns(base.range);
    else if (base.value.type.kind === 'record') columns = recordColumns(base.value, ctx, item.pos);
    else throw new SqlSyntaxError(`${item.qualifier.join('.')} is not a table or record, so it has no *`, ctx.text, item.pos);
  } else {
    columns = scope.ranges.flatMap(rangeColumns);
    if (!columns.length) throw new SqlSyntaxError('SELECT * needs a FROM clause', ctx.text, item.pos);
  }
  const except = new Set(item.except.map((n) => n.toLowerCase()));
  for (const name of item.except) {
    if (!columns.some((c) => c.name.toLowerCase() === name.toLowerCase())) throw new SqlNameError(`column ${name} in EXCEPT is not in *`, ctx.text, item.pos);
  }
  return columns.filter((c) => !except.has(c.name.toLowerCase())).map((c) => ({ ...c, explicit: false }));
}

function rangeColumns(range: Range): { name: string; value: Typed }[] {
  switch (range.kind) {
    case 'source': return sourceColumnNames(range.source).map((name) => ({ name, value: sourceColumn(range, name)! }));
    case 'relation': return range.columns.map((c) => ({ name: c.name, value: typed(pg.column(range.alias, c.name), c.type) }));
    case 'value': return [{ name: range.names[0]!, value: range.value }];
  }
}

function recordColumns(value: Typed, ctx: Context, pos: number): { name: string; value: Typed }[] {
  const fields = value.type.kind === 'record' ? value.type.fields ?? {} : {};
  return Object.keys(fields).map((name) => ({ name, value: fieldOf(value, name, ctx, pos) }));
}

/** GROUP BY: a select alias (even one equal to an input column, as BigQuery does) or an ordinal groups by that select item. */
function resolveGroupKey(g: E.Expr, items: readonly SelectTarget[], scope: Scope, ctx: Context): PgExpr {
  const ordinal = selectOrdinal(g, items, ctx);
  if (ordinal !== undefined) return pg.number(String(ordinal));
  return resolveExpr(g, scope, ctx).sql;
}

/** `e` as a select-list position: an integer literal, or a name of the select list (GROUP BY: aliases only). */
function selectOrdinal(e: E.Expr, items: readonly SelectTarget[], ctx: Context, implicitNames = false): number | undefined {
  if (e.kind === 'literal' && e.type === 'INT64') {
    const n = Number(e.value);
    if (n < 1 || n > items.length) throw new SqlNameError(`ordinal ${n} is out of range: the SELECT list has ${items.length} columns`, ctx.text, e.pos);
    return n;
  }
  if (e.kind === 'path' && e.parts.length === 1) {
    const name = e.parts[0]!.toLowerCase();
    const i = items.findIndex((t) => (t.explicit || implicitNames) && t.name.toLowerCase() === name);
    if (i >= 0) return i + 1;
  }
  return undefined;
}

function resolveOrder(o: Q.OrderItem, body: ResolvedBody, ctx: Context): PgOrder {
  const items = body.select?.items ?? body.columns.map((c) => ({ name: c.name, value: typed(pg.column(undefined, c.name), c.type), explicit: true }));
  const ordinal = selectOrdinal(o.expr, items, ctx, true);
  let expr: PgExpr;
  if (ordinal !== undefined) expr = pg.number(String(ordinal));
  else if (body.select) expr = resolveExpr(o.expr, body.select.scope.withAliases(body.select.items), ctx).sql;
  else if (o.expr.kind === 'path' && o.expr.parts.length === 1) {
    const name = o.expr.parts[0]!.toLowerCase();
    const i = items.findIndex((t) => t.name.toLowerCase() === name);
    if (i < 0) throw new SqlNameError(`ORDER BY ${o.expr.parts[0]} is not an output column${didYouMean(name, items.map((t) => t.name))}`, ctx.text, o.pos);
    expr = pg.number(String(i + 1));
  } else throw new SqlUnsupportedError('ORDER BY after UNION ALL takes output column names or ordinals', ctx.text, o.pos);
  return { expr, desc: o.desc, nulls: o.nulls };
}

/** LIMIT / OFFSET: an integer literal or a parameter. */
function resolveCount(e: E.Expr, ctx: Context, clause: string): PgExpr {
  if (e.kind === 'literal' && e.type === 'INT64') return pg.number(String(Number(e.value)));
  if (e.kind === 'param') return pg.cast(pg.param(ctx.translation.parameter(e.name)), 'bigint');
  throw new SqlSyntaxError(`${clause} takes an integer literal or a parameter`, ctx.text, e.pos);
}

// ── FROM ─────────────────────────────────────────────────────────────────────

/** The join being built: what is on its left and how the next item attaches. */
interface JoinLink {
  readonly left: PgFrom | undefined;
  readonly type: F.JoinType;
  readonly on: E.Expr | undefined;
  readonly using: readonly string[];
  readonly scope: Scope;
  readonly ctx: Context;
}

type FromResolver<K extends F.FromKind> = (item: Extract<F.FromItem, { kind: K }>, link: JoinLink, guards: PgExpr[]) => PgFrom | undefined;

/**
 * FROM items, attached left to right (joins are left-deep). UNNEST of a record array that always
 * held one object is not joined at all: its alias stands for `array->0`, read by path, and
 * CROSS/INNER semantics (drop rows without the record) become an `IS NOT NULL` guard in `guards`.
 */
const FROM_RESOLVERS: { [K in F.FromKind]: FromResolver<K> } = {
  join: (j, link, guards) => {
    const left = resolveFromItem(j.left, link, guards);
    return resolveFromItem(j.right, { ...link, left, type: j.type, on: j.on, using: j.using }, guards);
  },

  unnest: (item, link, guards) => {
    const { scope, ctx, type, on } = link;
    const array = resolveExpr(item.expr, scope, ctx);
    if (array.type.kind !== 'jsonArray') {
      throw new SqlUnsupportedError(`UNNEST needs an array field of a source; got ${array.type.kind === 'scalar' ? array.type.name : 'a computed array'}`, ctx.text, item.expr.pos);
    }
    const names = [item.alias ?? implicitAlias(item.expr) ?? ctx.translation.alias()];
    const trueOn = on === undefined || (on.kind === 'literal' && on.value === true);
    if (array.type.single && array.type.element.kind === 'record' && (type !== 'LEFT' || trueOn)) {
      const value = typed(pg.op('->', array.sql, pg.number('0')), array.type.element);
      scope.ranges.push({ kind: 'value', names, value });
      if (type !== 'LEFT') {
        guards.push(pg.is(value.sql, 'NULL', true));
        const condition = joinCondition(link);
        if (condition) guards.push(condition);
      }
      return link.left;
    }
    const alias = ctx.translation.alias();
    const record = array.type.element.kind === 'record';
    const column = pg.column(alias, 'value');
    const value = record ? typed(column, array.type.element) : jsonText(column, array.type.element);
    // jsonb_array_elements raises on a non-array; a stray scalar must behave like a missing array.
    const arg = pg.case([{ when: pg.op('=', pg.func('jsonb_typeof', [array.sql]), pg.literal('array')), then: array.sql }]);
    scope.ranges.push({ kind: 'value', names, value });
    return join(link, { kind: 'function', fn: record ? 'jsonb_array_elements' : 'jsonb_array_elements_text', arg, alias, column: 'value' });
  },

  derived: (item, link) => {
    // A derived table cannot see the FROM items before it (BigQuery has no LATERAL subqueries), only outer queries.
    const r = resolveQuery(item.query, link.ctx, link.scope.parent);
    const alias = link.ctx.translation.alias();
    link.scope.ranges.push({ kind: 'relation', names: item.alias ? [item.alias] : [], alias, columns: r.columns });
    return join(link, { kind: 'derived', query: r.query, alias });
  },

  table: (item, link) => {
    const { scope, ctx } = link;
    const alias = ctx.translation.alias();
    const cte = ctx.ctes.get(item.name.toLowerCase());
    if (cte) {
      scope.ranges.push({ kind: 'relation', names: [item.alias ?? item.name], alias, columns: cte.columns });
      return join(link, { kind: 'table', name: cte.name, alias });
    }
    const cteNames = [...ctx.ctes.values()].map((c) => c.name);
    if (!ctx.sources) {
      throw new SqlSandboxError(`table ${item.name} is not allowed here: a sandboxed query may only read the endpoint's CTEs (${cteNames.join(', ')})`, ctx.text, item.pos);
    }
    const source = ctx.sources(item.name);
    if (!source) throw new SqlNameError(`unknown table ${item.name}${didYouMean(item.name, cteNames)}`, ctx.text, item.pos);
    // Without an alias, both the full name and its last part qualify columns (`prod.id`).
    const parts = item.name.split('.');
    scope.ranges.push({ kind: 'source', names: item.alias ? [item.alias] : [item.name, parts[parts.length - 1]!], alias, source });
    return join(link, { kind: 'table', schema: source.schema, name: source.table, alias });
  },
};

function resolveFromItem(item: F.FromItem, link: JoinLink, guards: PgExpr[]): PgFrom | undefined {
  return (FROM_RESOLVERS[item.kind] as FromResolver<F.FromKind>)(item, link, guards);
}

/** The ON condition, resolved once the new item's names are in scope. */
function joinCondition(link: JoinLink): PgExpr | undefined {
  return link.on && expectBool(resolveExpr(link.on, link.scope, link.ctx), link.ctx, link.on.pos);
}

function join(link: JoinLink, right: PgFrom): PgFrom {
  const { left, type, using, scope } = link;
  if (!left) return right;
  if (using.length) {
    for (const name of using) scope.using.add(name.toLowerCase());
    return { kind: 'join', type: type === 'LEFT' ? 'LEFT' : 'INNER', left, right, using };
  }
  if (type === 'COMMA' || type === 'CROSS') return { kind: 'join', type: 'CROSS', left, right };
  return { kind: 'join', type, left, right, on: joinCondition(link) ?? pg.literal(true) };
}

function implicitAlias(e: E.Expr): string | undefined {
  return e.kind === 'path' ? e.parts[e.parts.length - 1] : undefined;
}

/** Text from jsonb_array_elements_text, typed as the array's element. */
function jsonText(text: PgExpr, element: BqType): Typed {
  if (element.kind !== 'scalar' || element.name === 'STRING') return typed(text, element.kind === 'scalar' ? element : STRING);
  return typed(pg.cast(text, pgTypeOf(element)), element);
}

// ── names ────────────────────────────────────────────────────────────────────

function sourceColumnNames(source: SourceTable): string[] {
  return [...FIXED.keys(), METADATA_COLUMN, ...Object.keys(source.fields).filter((k) => k !== METADATA_COLUMN && !FIXED.has(k))];
}

/** A column of a log table: a fixed column, the metadata column, or a top-level field stored in `body`. */
function sourceColumn(range: Extract<Range, { kind: 'source' }>, name: string): Typed | undefined {
  const keys = sourceKeys(range.source);
  const key = keys.exact.has(name) ? name : keys.folded.get(name.toLowerCase());
  if (key === undefined) return undefined;
  const fixed = FIXED.get(key);
  if (fixed) return typed(pg.column(range.alias, key), fixed);
  const field = range.source.fields[key];
  if (key === METADATA_COLUMN) {
    // The metadata column exists even before a source has seen any events: a record array without known fields.
    return typed(pg.column(range.alias, key), field ? fieldType(field) : { kind: 'jsonArray', element: { kind: 'record' }, single: false });
  }
  return jsonField(pg.column(range.alias, BODY_COLUMN), key, field!);
}

/** Column names a source answers to, exact and case-folded; computed once per source object. */
interface SourceKeys { readonly exact: ReadonlySet<string>; readonly folded: ReadonlyMap<string, string>; readonly all: readonly string[] }
const keysBySource = new WeakMap<SourceTable, SourceKeys>();

function sourceKeys(source: SourceTable): SourceKeys {
  let keys = keysBySource.get(source);
  if (!keys) {
    const all = [...FIXED.keys(), METADATA_COLUMN, ...Object.keys(source.fields)];
    const folded = new Map<string, string>();
    for (const k of all) if (!folded.has(k.toLowerCase())) folded.set(k.toLowerCase(), k);
    keysBySource.set(source, (keys = { exact: new Set(all), folded, all }));
  }
  return keys;
}

/** Exact name first, then BigQuery's case-insensitive match. */
function findKey(name: string, keys: Iterable<string>): string | undefined {
  let folded: string | undefined;
  const lower = name.toLowerCase();
  for (const k of keys) {
    if (k === name) return k;
    if (folded === undefined && k.toLowerCase() === lower) folded = k;
  }
  return folded;
}

/** `object -> key` typed by the schema; scalar leaves read as text and cast (INT64 → bigint, …). */
function jsonField(object: PgExpr, key: string, field: FieldSchema | undefined): Typed {
  if (!field) return typed(pg.op('->>', object, pg.literal(key)), LOOSE_JSON_LEAF);
  const type = fieldType(field);
  if (type.kind !== 'scalar') return typed(pg.op('->', object, pg.literal(key)), type);
  const text = pg.op('->>', object, pg.literal(key));
  return typed(type.name === 'STRING' ? text : pg.cast(text, pgTypeOf(type)), type);
}

function fieldOf(value: Typed, name: string, ctx: Context, pos: number): Typed {
  const t = value.type;
  if (t.kind === 'record') {
    const known = t.fields && Object.keys(t.fields).length ? t.fields : undefined;
    // A record whose schema lists no fields yet (no events seen) reads any field as an untyped leaf.
    if (!known) return jsonField(value.sql, name, undefined);
    const key = findKey(name, Object.keys(known));
    if (key === undefined) throw new SqlNameError(`unknown field ${name}${didYouMean(name, Object.keys(known))}`, ctx.text, pos);
    return jsonField(value.sql, key, known[key]);
  }
  const what = t.kind === 'scalar' ? t.name : 'an ARRAY';
  const hint = t.kind === 'jsonArray' ? '; UNNEST it first, e.g. cross join unnest(x) as x' : '';
  throw new SqlSyntaxError(`cannot access field ${name} of ${what}${hint}`, ctx.text, pos);
}

type PathHead = { kind: 'range'; range: Range } | { kind: 'value'; value: Typed };

/**
 * Resolves `a.b.c`: a range alias first (so `unnest(metadata) as metadata` shadows the column),
 * then a column of a table in scope, then a field of an unnested record; outer scopes after inner.
 */
function resolvePath(parts: readonly string[], pos: number, scope: Scope, ctx: Context, allowRange = false): PathHead {
  const [head, ...rest] = parts as [string, ...string[]];
  for (let s: Scope | undefined = scope; s; s = s.parent) {
    const range = s.ranges.find((r) => r.names.some((n) => n.toLowerCase() === head.toLowerCase()));
    if (range) {
      if (range.kind === 'value') return { kind: 'value', value: fields(range.value, rest, ctx, pos) };
      if (!rest.length) {
        if (allowRange) return { kind: 'range', range };
        throw new SqlUnsupportedError(`${head} is a table; select its columns, e.g. ${head}.id`, ctx.text, pos);
      }
      const column = rangeColumn(range, rest[0]!);
      if (!column) throw new SqlNameError(`unknown column ${rest[0]} of ${head}${didYouMean(rest[0]!, rangeColumns(range).map((c) => c.name))}`, ctx.text, pos);
      if (rest.length === 1 && allowRange && column.type.kind === 'record') return { kind: 'value', value: column };
      return { kind: 'value', value: fields(column, rest.slice(1), ctx, pos) };
    }
    const column = unqualifiedColumn(head, s, ctx, pos);
    if (column) return { kind: 'value', value: fields(column, rest, ctx, pos) };
    const target = s.aliases.find((t) => t.name.toLowerCase() === head.toLowerCase());
    if (target) return { kind: 'value', value: fields(target.value, rest, ctx, pos) };
  }
  const candidates = visibleNames(scope);
  throw new SqlNameError(`unknown name ${head}${didYouMean(head, candidates)}`, ctx.text, pos);
}

function rangeColumn(range: Range, name: string): Typed | undefined {
  if (range.kind === 'source') return sourceColumn(range, name);
  if (range.kind === 'relation') {
    const key = findKey(name, range.columns.map((c) => c.name));
    const column = range.columns.find((c) => c.name === key);
    return column && typed(pg.column(range.alias, column.name), column.type);
  }
  return undefined;
}

function unqualifiedColumn(name: string, scope: Scope, ctx: Context, pos: number): Typed | undefined {
  if (scope.using.has(name.toLowerCase())) {
    const owner = scope.ranges.find((r) => rangeColumn(r, name));
    return owner && typed(pg.column(undefined, name), rangeColumn(owner, name)!.type);
  }
  let found: Typed | undefined;
  for (const range of scope.ranges) {
    const column = rangeColumn(range, name);
    if (!column) continue;
    if (found) throw new SqlNameError(`column name ${name} is ambiguous; qualify it with a table alias`, ctx.text, pos);
    found = column;
  }
  if (found) return found;
  // Fields of unnested records are visible unqualified (`where path like …` after `unnest(m.request) as r`).
  for (const range of scope.ranges) {
    if (range.kind !== 'value' || range.value.type.kind !== 'record' || !range.value.type.fields) continue;
    const key = findKey(name, Object.keys(range.value.type.fields));
    if (key !== undefined) return fieldOf(range.value, key, ctx, pos);
  }
  return undefined;
}

function visibleNames(scope: Scope): string[] {
  const names: string[] = [];
  for (let s: Scope | undefined = scope; s; s = s.parent) {
    for (const r of s.ranges) {
      names.push(...r.names);
      if (r.kind !== 'value') names.push(...rangeColumns(r).map((c) => c.name));
      else if (r.value.type.kind === 'record') names.push(...Object.keys(r.value.type.fields ?? {}));
    }
  }
  return names;
}

function fields(value: Typed, names: readonly string[], ctx: Context, pos: number): Typed {
  return names.reduce((v, name) => fieldOf(v, name, ctx, pos), value);
}

// ── expressions ──────────────────────────────────────────────────────────────

type ExprResolver<K extends E.ExprKind> = (e: Extract<E.Expr, { kind: K }>, scope: Scope, ctx: Context) => Typed;

const EXPR_RESOLVERS: { [K in E.ExprKind]: ExprResolver<K> } = {
  literal: (e) => {
    switch (e.type) {
      case 'STRING': return typed(pg.literal(e.value as string), STRING, { literal: e.value as string });
      case 'INT64': return typed(pg.number(BigInt(e.value as string).toString()), INT64);
      case 'FLOAT64': return typed(pg.cast(pg.number(e.value as string), 'float8'), FLOAT64);
      case 'BOOL': return typed(pg.literal(e.value as boolean), BOOL);
      case 'NULL': return typed(pg.literal(null), NULL_TYPE);
    }
  },
  param: (e, _scope, ctx) => typed(pg.param(ctx.translation.parameter(e.name)), STRING, { param: true }),
  path: (e, scope, ctx) => {
    const head = resolvePath(e.parts, e.pos, scope, ctx);
    return (head as { value: Typed }).value;
  },
  field: (e, scope, ctx) => fieldOf(resolveExpr(e.base, scope, ctx), e.name, ctx, e.pos),
  subscript: (e, scope, ctx) => resolveSubscript(e, scope, ctx),
  unary: (e, scope, ctx) => {
    const v = resolveExpr(e.operand, scope, ctx);
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
    const [a, low] = unify(v, resolveExpr(e.low, scope, ctx));
    const [, high] = unify(a, resolveExpr(e.high, scope, ctx));
    return typed({ kind: 'between', operand: a.sql, low: low.sql, high: high.sql, negated: e.negated }, BOOL);
  },
  like: (e, scope, ctx) => {
    const v = asText(resolveExpr(e.operand, scope, ctx));
    return typed(pg.op(e.negated ? 'NOT LIKE' : 'LIKE', v, asText(resolveExpr(e.pattern, scope, ctx))), BOOL);
  },
  inList: (e, scope, ctx) => {
    let v = resolveExpr(e.operand, scope, ctx);
    const list = e.list.map((item) => {
      const [a, b] = unify(v, resolveExpr(item, scope, ctx));
      v = a;
      return b.sql;
    });
    return typed({ kind: 'in', operand: v.sql, list, negated: e.negated }, BOOL);
  },
  inQuery: (e, scope, ctx) => {
    const v = resolveExpr(e.operand, scope, ctx);
    const r = resolveQuery(e.query, ctx, scope);
    if (r.columns.length !== 1) throw new SqlSyntaxError('IN (subquery) needs a subquery with one column', ctx.text, e.query.pos);
    return typed({ kind: 'in', operand: adapt(v, r.columns[0]!.type).sql, query: r.query, negated: e.negated }, BOOL);
  },
  case: (e, scope, ctx) => {
    const operand = e.operand && resolveExpr(e.operand, scope, ctx);
    const conditions = e.whens.map((w) => resolveExpr(w.when, scope, ctx));
    const results = unifyAll([...e.whens.map((w) => resolveExpr(w.then, scope, ctx)), ...(e.otherwise ? [resolveExpr(e.otherwise, scope, ctx)] : [])]);
    const whens = conditions.map((c, i) => ({
      when: operand ? unify(operand, c)[1].sql : expectBool(c, ctx, e.whens[i]!.when.pos),
      then: results[i]!.sql,
    }));
    const node = pg.case(whens, e.otherwise ? results[results.length - 1]!.sql : undefined, operand && unify(operand, conditions[0]!)[0].sql);
    return typed(node, commonType(results));
  },
  cast: (e, scope, ctx) => castTo(resolveExpr(e.operand, scope, ctx), e.type, e.safe, ctx.text, e.pos),
  call: (e, scope, ctx) => resolveCall(e, scope, ctx),
  extract: (e, scope, ctx) => {
    const v = resolveExpr(e.operand, scope, ctx);
    if (e.part === 'DATE') return typed(pg.cast(pg.atUtc(v.sql), 'date'), scalar('DATE'));
    const part = EXTRACT_PARTS[e.part];
    if (!part) throw new SqlUnsupportedError(`EXTRACT(${e.part} …) is not supported`, ctx.text, e.pos);
    // From a TIMESTAMP BigQuery extracts in UTC; timezone() makes that independent of the session zone.
    const wall = isScalar(v.type, 'TIMESTAMP') ? pg.atUtc(v.sql) : v.sql;
    return typed(pg.cast(part(wall), 'bigint'), INT64);
  },
  interval: (e, scope, ctx) => {
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
    const r = resolveQuery(e.query, ctx, scope);
    if (r.columns.length !== 1) throw new SqlSyntaxError('a scalar subquery must return one column', ctx.text, e.pos);
    return typed(pg.subquery(r.query), r.columns[0]!.type);
  },
  exists: (e, scope, ctx) => typed(pg.subquery(resolveQuery(e.query, ctx, scope).query, true), BOOL),
};

export function resolveExpr(e: E.Expr, scope: Scope, ctx: Context): Typed {
  return (EXPR_RESOLVERS[e.kind] as ExprResolver<E.ExprKind>)(e, scope, ctx);
}

function expectBool(v: Typed, ctx: Context, pos: number): PgExpr {
  if (v.type.kind !== 'scalar' || !['BOOL', 'NULL'].includes(v.type.name)) {
    if (v.type.kind === 'scalar' && v.type.loose) return pg.cast(v.sql, 'boolean');
    throw new SqlSyntaxError(`expected a BOOL condition, got ${v.type.kind === 'scalar' ? v.type.name : 'a record or array'}`, ctx.text, pos);
  }
  return v.sql;
}

const ARITHMETIC = new Set(['+', '-', '*', '/']);

function resolveBinary(e: E.Binary, scope: Scope, ctx: Context): Typed {
  let left = resolveExpr(e.left, scope, ctx);
  let right = resolveExpr(e.right, scope, ctx);
  if (e.op === '||') return typed(pg.op('||', asText(left), asText(right)), STRING);
  if (!ARITHMETIC.has(e.op)) {
    [left, right] = unify(left, right);
    return typed(pg.op(e.op === '!=' ? '<>' : e.op, left.sql, right.sql), BOOL);
  }
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
  if (e.base.kind === 'path' && e.base.parts.length === 1 && !nameResolves(e.base.parts[0]!, scope)) {
    const cte = ctx.ctes.get(e.base.parts[0]!.toLowerCase());
    if (cte) {
      if (cte.columns.length !== 1) throw new SqlSyntaxError(`${cte.name}[…] needs a CTE with one column; ${cte.name} has ${cte.columns.length}`, ctx.text, e.pos);
      const alias = ctx.translation.alias();
      const column = cte.columns[0]!;
      const query: PgQuery = {
        kind: 'query', ctes: [], orderBy: [], limit: pg.number('1'), offset: zeroBased,
        body: { kind: 'select', distinct: false, targets: [{ expr: pg.column(alias, column.name), name: column.name }], from: { kind: 'table', name: cte.name, alias }, groupBy: [] },
      };
      return typed(pg.subquery(query), column.type);
    }
  }
  const base = resolveExpr(e.base, scope, ctx);
  if (base.type.kind === 'array') {
    // Postgres arrays are 1-based; out of range yields NULL for OFFSET as for SAFE_OFFSET.
    return typed(pg.subscript(base.sql, pg.op('+', zeroBased, pg.number('1'))), base.type.element);
  }
  if (base.type.kind === 'jsonArray') {
    const element = pg.op('->', base.sql, pg.cast(zeroBased, 'bigint'));
    if (base.type.element.kind !== 'scalar') return typed(element, base.type.element);
    return jsonText(pg.op('->>', base.sql, pg.cast(zeroBased, 'bigint')), base.type.element);
  }
  throw new SqlSyntaxError('only arrays can be indexed with [OFFSET(n)]', ctx.text, e.pos);
}

function nameResolves(name: string, scope: Scope): boolean {
  const lower = name.toLowerCase();
  for (let s: Scope | undefined = scope; s; s = s.parent) {
    if (s.ranges.some((r) => r.names.some((n) => n.toLowerCase() === lower) || rangeColumn(r, name))) return true;
  }
  return false;
}

function resolveCall(e: E.Call, scope: Scope, ctx: Context): Typed {
  const fn = Object.prototype.hasOwnProperty.call(FUNCTIONS, e.name) ? FUNCTIONS[e.name] : undefined;
  if (!fn) throw new SqlNameError(`unknown function ${e.name}${didYouMean(e.name, Object.keys(FUNCTIONS))}`, ctx.text, e.pos);
  const n = e.args.length;
  if (n < fn.min || n > fn.max || (e.star && e.name !== 'count')) {
    const range = fn.min === fn.max ? `${fn.min}` : `${fn.min} to ${fn.max}`;
    throw new SqlSyntaxError(`${e.name.toUpperCase()} takes ${range} argument${fn.max === 1 ? '' : 's'}, got ${e.star ? '*' : n}`, ctx.text, e.pos);
  }
  if (e.distinct && !fn.aggregate?.distinct) throw new SqlUnsupportedError(`${e.name.toUpperCase()}(DISTINCT …) is not supported`, ctx.text, e.pos);
  if ((e.orderBy.length || e.limit) && !fn.aggregate?.orderBy) throw new SqlUnsupportedError(`${e.name.toUpperCase()}(… ORDER BY / LIMIT) is not supported`, ctx.text, e.pos);
  return fn.build(new ResolvingCallSite(e, scope, ctx));
}

/** Arguments resolved on demand: date-part words like `hour` are never resolved as names. */
class ResolvingCallSite implements CallSite {
  private readonly resolved: Typed[] = [];
  readonly text: string;

  constructor(readonly call: E.Call, private readonly scope: Scope, private readonly ctx: Context) {
    this.text = ctx.text;
  }

  arg(i: number): Typed {
    return (this.resolved[i] ??= resolveExpr(this.call.args[i]!, this.scope, this.ctx));
  }

  word(i: number): string {
    const a = this.call.args[i]!;
    if (a.kind === 'path' && a.parts.length === 1) return a.parts[0]!.toUpperCase();
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

  orderBy(): PgOrder[] {
    return this.call.orderBy.map((o) => ({ expr: resolveExpr(o.expr, this.scope, this.ctx).sql, desc: o.desc }));
  }
}


