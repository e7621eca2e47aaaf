/** Queries: WITH, SELECT (select list, GROUP BY, HAVING), set operations, ORDER BY and LIMIT. */
import type * as E from '../ast/expressions.js';
import type * as Q from '../ast/queries.js';
import { SqlNameError, SqlSandboxError, SqlSyntaxError, didYouMean } from '../errors.js';
import { pg, type PgExpr, type PgOrder, type PgQuery, type PgSelect } from '../postgres/ast.js';
import { isScalarFunction } from '../postgres/functions.js';
import { unionType, type Typed } from '../types.js';
import { expectBool, findWindowCall, hasWindow, resolveExpr } from './expressions.js';
import { mapChildren, sameExpr, some } from '../postgres/transform.js';
import { resolveFromItem } from './from.js';
import { rangeColumns, recordColumns, resolvePath } from './names.js';
import { selectEvents } from './events.js';
import { exposeHotColumns } from './hot.js';
import { Scope, type Column, type Context, type Resolved, type SelectTarget } from './scope.js';
import type { SourceTable } from '../catalog.js';

/** A context for a piece of text resolved on its own (an endpoint's query, a caller's `sql`). */
export function rootContext(fields: Omit<Context, 'resolveQuery'>): Context {
  return { ...fields, resolveQuery };
}

/** Resolves a query; `parent` is the enclosing scope for correlated subqueries. */
export function resolveQuery(q: Q.Query, ctx: Context, parent?: Scope): Resolved {
  const { ctx: inner, ctes } = resolveCtes(q.ctes, ctx);
  const body = resolveBody(q.body, inner, parent);
  let orderBy = q.orderBy.map((o) => resolveOrder(o, body, inner));
  const limit = q.limit && resolveCount(q.limit, inner, 'LIMIT');
  const offset = q.offset && resolveCount(q.offset, inner, 'OFFSET');
  let pgBody = body.pg;
  if (body.qualify && pgBody.kind === 'select') ({ body: pgBody, orderBy } = wrapQualify(pgBody, body.qualify, orderBy, ctx));
  const query: PgQuery = { kind: 'query', ctes, body: pgBody, orderBy, limit, offset };
  return body.eventSource ? { query, columns: body.columns, eventSource: body.eventSource } : { query, columns: body.columns };
}

/**
 * QUALIFY, which Postgres lacks: the SELECT computes its outputs, the condition and each ORDER BY
 * expression as columns of a derived table, and an outer SELECT keeps the rows where the
 * condition holds. BigQuery applies QUALIFY after window functions and before DISTINCT, ORDER BY
 * and LIMIT, so DISTINCT moves out with ORDER BY and LIMIT; output names and types are unchanged.
 *
 *   SELECT <outputs> FROM (SELECT <outputs> AS c0…, <window> AS _q2…, <order> AS _o3… FROM …) AS q WHERE <qualify over q.c0, q._q2…> ORDER BY q._o3…
 *
 * The condition is evaluated in the outer query over the inner columns: a part equal to an output
 * (`rn = 1` with `rn` an alias) reads that column, and window calls, aggregates, columns and
 * subqueries become inner columns of their own, so nothing is computed twice.
 */
function wrapQualify(select: PgSelect, qualify: PgExpr, orderBy: readonly PgOrder[], ctx: Context): { body: PgSelect; orderBy: PgOrder[] } {
  const alias = ctx.translation.alias();
  const targets = select.targets.map((t, i) => ({ expr: t.expr, name: `c${i}` }));
  const lift = (e: PgExpr): PgExpr => {
    const same = targets.findIndex((t) => sameExpr(t.expr, e));
    if (same >= 0) return pg.column(alias, targets[same].name);
    if (!some(e, innerOnly)) return e;
    if (!innerOnly(e)) return mapChildren(e, lift);
    const name = `_q${targets.length}`;
    targets.push({ expr: e, name });
    return pg.column(alias, name);
  };
  const where = lift(qualify);
  const outerOrder = orderBy.map((o): PgOrder => {
    if (o.expr.kind === 'literal' && typeof o.expr.value === 'number') return o;
    const same = select.targets.findIndex((t) => sameExpr(t.expr, o.expr));
    if (same >= 0) return { ...o, expr: pg.number(String(same + 1)) };
    const name = `_o${targets.length}`;
    targets.push({ expr: o.expr, name });
    return { ...o, expr: pg.column(alias, name) };
  });
  const inner: PgQuery = { kind: 'query', ctes: [], body: { ...select, distinct: false, targets }, orderBy: [] };
  const body: PgSelect = {
    kind: 'select',
    distinct: select.distinct,
    targets: select.targets.map((t, i) => ({ expr: pg.column(alias, `c${i}`), name: t.name })),
    from: { kind: 'derived', query: inner, alias },
    where,
    groupBy: [],
  };
  return { body, orderBy: outerOrder };
}

/**
 * Nodes only the inner query of a QUALIFY can compute: columns of its FROM, window calls,
 * aggregates (and calls the catalogue does not know, which might be), subqueries.
 */
const innerOnly = (e: PgExpr): boolean =>
  e.kind === 'column' ||
  e.kind === 'subquery' ||
  (e.kind === 'in' && e.query !== undefined) ||
  (e.kind === 'func' && (e.over !== undefined || !isScalarFunction(e.name)));

/** Window functions are computed after WHERE, GROUP BY and HAVING: BigQuery refuses them there. */
function refuseWindow(clause: string, syntax: E.Expr | undefined, ctx: Context, fallback: number): never {
  const call = findWindowCall(syntax);
  throw new SqlSyntaxError(
    `window functions are not allowed in ${clause}; compute them in the select list and filter with QUALIFY or an outer query`,
    ctx.text,
    call?.pos ?? syntax?.pos ?? fallback,
  );
}

/** WITH: each CTE sees the ones before it; names must be new in this query. */
export function resolveCtes(
  list: readonly Q.Cte[],
  ctx: Context,
  reserved: ReadonlySet<string> = new Set(),
): { ctx: Context; ctes: PgQuery['ctes'] } {
  if (!list.length) return { ctx, ctes: [] };
  const visible = new Map(ctx.ctes);
  const ctes: { name: string; query: PgQuery }[] = [];
  for (const cte of list) {
    const key = cte.name.toLowerCase();
    if (reserved.has(key))
      throw new SqlSandboxError(`CTE ${cte.name} is already defined by the endpoint; choose another name`, ctx.text, cte.pos);
    if (ctes.some((c) => c.name.toLowerCase() === key)) throw new SqlNameError(`duplicate CTE name ${cte.name}`, ctx.text, cte.pos);
    const resolved = exposeHotColumns(resolveQuery(cte.query, { ...ctx, ctes: visible }));
    ctes.push({ name: cte.name, query: resolved.query });
    visible.set(key, { name: cte.name, columns: resolved.columns, eventSource: resolved.eventSource });
  }
  return { ctx: { ...ctx, ctes: visible }, ctes };
}

interface ResolvedBody {
  readonly pg: PgQuery['body'];
  readonly columns: readonly Column[];
  /** For ORDER BY on a plain SELECT: its FROM scope and select list. */
  readonly select?: { scope: Scope; items: readonly SelectTarget[] };
  /** QUALIFY's condition (resolveQuery wraps the SELECT to apply it). */
  readonly qualify?: PgExpr;
  /** Set when each row is one event of this source (resolve/events.ts). */
  readonly eventSource?: SourceTable;
}

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
      throw new SqlSyntaxError(`${s.op} operands have ${left.columns.length} and ${right.columns.length} columns`, ctx.text, s.pos);
    }
    const columns = left.columns.map((c, i) => ({ name: c.name, type: unionType(c.type, right.columns[i].type) }));
    return {
      pg: { kind: 'setOp', op: s.op === 'UNION ALL' ? 'UNION ALL' : 'UNION', left: branch(left, ctx), right: branch(right, ctx) },
      columns,
    };
  },
};

/** A UNION operand: a SELECT with QUALIFY is wrapped here (it has no ORDER BY of its own). */
function branch(b: ResolvedBody, ctx: Context): PgQuery['body'] {
  return b.qualify && b.pg.kind === 'select' ? wrapQualify(b.pg, b.qualify, [], ctx).body : b.pg;
}

function resolveBody(b: Q.QueryBody, ctx: Context, parent?: Scope): ResolvedBody {
  return (BODY_RESOLVERS[b.kind] as (b: Q.QueryBody, ctx: Context, parent?: Scope) => ResolvedBody)(b, ctx, parent);
}

function resolveSelect(s: Q.Select, ctx: Context, parent?: Scope): ResolvedBody {
  const scope = new Scope(parent);
  const from = s.from && resolveFromItem(s.from, { left: undefined, type: 'COMMA', on: undefined, using: [], scope, ctx });
  // perf: window calls are counted as they are resolved, so clauses are not walked to find them
  // (a HAVING may repeat a large select alias thousands of times).
  const state = ctx.translation;
  const beforeItems = state.windows;
  const items = resolveSelectList(s.items, scope, ctx);
  const itemWindows = state.windows > beforeItems;
  let before = state.windows;
  const where = s.where && expectBool(resolveExpr(s.where, scope, ctx), ctx, s.where.pos);
  if (state.windows > before) refuseWindow('WHERE', s.where, ctx, s.pos);
  const groupBy = s.groupBy.map((g) => {
    before = state.windows;
    const key = resolveGroupKey(g, items, scope, ctx);
    const ordinal = key.kind === 'literal' && typeof key.value === 'number' ? items[key.value - 1] : undefined;
    if (state.windows > before || (itemWindows && ordinal && hasWindow(ordinal.value.sql))) refuseWindow('GROUP BY', g, ctx, s.pos);
    return key;
  });
  before = state.windows;
  const having = s.having && resolveExpr(s.having, scope.withAliases(items), ctx).sql;
  if (having && (state.windows > before || (itemWindows && hasWindow(having)))) refuseWindow('HAVING', s.having, ctx, s.pos);
  const qualify = s.qualify && expectBool(resolveExpr(s.qualify, scope.withAliases(items), ctx), ctx, s.qualify.pos);
  if (groupBy.length) state.groupedSelects++;
  const select: PgSelect = {
    kind: 'select',
    distinct: s.distinct,
    targets: items.map((t) => ({ expr: t.value.sql, name: t.name })),
    from,
    where,
    groupBy,
    having,
  };
  const columns = items.map((t): Column =>
    t.value.hot ? { name: t.name, type: t.value.type, hot: t.value.hot } : { name: t.name, type: t.value.type },
  );
  return { pg: select, columns, select: { scope, items }, qualify, eventSource: selectEvents(scope, select) };
}

function resolveSelectList(list: readonly Q.SelectItem[], scope: Scope, ctx: Context): SelectTarget[] {
  const targets: SelectTarget[] = [];
  let anonymous = 0;
  for (const item of list) {
    if (item.kind === 'selectStar') {
      targets.push(...expandStar(item, scope, ctx));
      ctx.translation.checkSelectColumns(targets.length, ctx.text, item.pos); // security: see MAX_SELECT_COLUMNS
      continue;
    }
    const value = resolveExpr(item.expr, scope, ctx);
    // BigQuery names an unaliased column after its last name part (`request.method` → method), else f0_, f1_, …
    const implicit =
      item.expr.kind === 'path' ? item.expr.parts[item.expr.parts.length - 1] : item.expr.kind === 'field' ? item.expr.name : undefined;
    const name = item.alias ?? implicit ?? `f${anonymous++}_`;
    targets.push({ name, value, explicit: item.alias !== undefined });
  }
  ctx.translation.addColumns(targets.length, ctx.text, list[0]?.pos ?? 0);
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
    columns = [];
    for (const range of scope.ranges) {
      columns.push(...rangeColumns(range));
      // security: checked as it grows, so `select * from c a, c b, …` stops before building millions of columns.
      ctx.translation.checkSelectColumns(columns.length, ctx.text, item.pos);
    }
    if (!columns.length) throw new SqlSyntaxError('SELECT * needs a FROM clause', ctx.text, item.pos);
  }
  const except = new Set(item.except.map((n) => n.toLowerCase()));
  for (const name of item.except) {
    if (!columns.some((c) => c.name.toLowerCase() === name.toLowerCase()))
      throw new SqlNameError(`column ${name} in EXCEPT is not in *`, ctx.text, item.pos);
  }
  return columns.filter((c) => !except.has(c.name.toLowerCase())).map((c) => ({ ...c, explicit: false }));
}

/** GROUP BY: a select alias (even one equal to an input column, as BigQuery does) or an ordinal groups by that select item. */
function resolveGroupKey(g: E.Expr, items: readonly SelectTarget[], scope: Scope, ctx: Context): PgExpr {
  const ordinal = selectOrdinal(g, items, ctx);
  if (ordinal !== undefined) return pg.number(String(ordinal));
  return resolveExpr(g, scope, ctx).sql;
}

/** An output column as ORDER BY and GROUP BY see it. */
interface OutputName {
  readonly name: string;
  readonly explicit: boolean;
}

/** `e` as a select-list position: an integer literal, or a name of the select list (GROUP BY: aliases only). */
function selectOrdinal(e: E.Expr, items: readonly OutputName[], ctx: Context, implicitNames = false): number | undefined {
  if (e.kind === 'literal' && e.type === 'INT64') {
    const n = Number(e.value);
    if (n < 1 || n > items.length)
      throw new SqlNameError(`ordinal ${n} is out of range: the SELECT list has ${items.length} columns`, ctx.text, e.pos);
    return n;
  }
  if (e.kind === 'path' && e.parts.length === 1) {
    const name = e.parts[0].toLowerCase();
    const i = items.findIndex((t) => (t.explicit || implicitNames) && t.name.toLowerCase() === name);
    if (i >= 0) return i + 1;
  }
  return undefined;
}

/** ORDER BY: output names and ordinals first (as BigQuery), then expressions over the FROM scope and select aliases. */
function resolveOrder(o: Q.OrderItem, body: ResolvedBody, ctx: Context): PgOrder {
  const items: readonly OutputName[] = body.select?.items ?? body.columns.map((c) => ({ name: c.name, explicit: true }));
  const ordinal = selectOrdinal(o.expr, items, ctx, true);
  if (ordinal !== undefined) return { expr: pg.number(String(ordinal)), desc: o.desc, nulls: o.nulls };
  if (!body.select) {
    const hint =
      o.expr.kind === 'path'
        ? didYouMean(
            o.expr.parts.join('.'),
            items.map((t) => t.name),
          )
        : '';
    throw new SqlNameError(`ORDER BY after a set operation takes output column names or ordinals${hint}`, ctx.text, o.pos);
  }
  const expr = resolveExpr(o.expr, body.select.scope.withAliases(body.select.items), ctx).sql;
  return { expr, desc: o.desc, nulls: o.nulls };
}

/** LIMIT / OFFSET: an integer literal or a parameter. */
function resolveCount(e: E.Expr, ctx: Context, clause: string): PgExpr {
  if (e.kind === 'literal' && e.type === 'INT64') return pg.number(String(Number(e.value)));
  if (e.kind === 'param') return pg.cast(pg.param(ctx.translation.parameter(e.name)), 'bigint');
  throw new SqlSyntaxError(`${clause} takes an integer literal or a parameter`, ctx.text, e.pos);
}
