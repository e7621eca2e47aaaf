/**
 * FROM clauses: sources, CTEs, derived tables and UNNEST, attached left to right. UNNEST of a
 * single-record array becomes a path read plus a guard instead of a join.
 */
import type * as E from '../ast/expressions.js';
import type * as F from '../ast/from.js';
import { SqlNameError, SqlSandboxError, SqlUnsupportedError, didYouMean } from '../errors.js';
import { pg, type PgExpr, type PgFrom } from '../postgres/ast.js';
import { sameExpr } from '../postgres/transform.js';
import { typed } from '../types.js';
import { expectBool, resolveExpr } from './expressions.js';
import { fromJsonText } from '../coerce.js';
import { isStrict } from '../catalogue.js';
import { resolveQuery } from './queries.js';
import { resolveEndpointTable } from './endpoints.js';
import { jsonStoredType } from './structs.js';
import type { Context, Scope } from './scope.js';
import { exposeHotColumns, guardedRecord, recordGuard } from './hot.js';

/** The join being built: what is on its left and how the next item attaches. */
export interface JoinLink {
  readonly left: PgFrom | undefined;
  readonly type: F.JoinType;
  readonly on: E.Expr | undefined;
  readonly using: readonly string[];
  readonly scope: Scope;
  readonly ctx: Context;
  /**
   * UNNEST of a single record is joined for real (LATERAL jsonb_array_elements) instead of read
   * by path with a guard in WHERE: the guard is right only when every join above it is INNER,
   * CROSS or LEFT with the UNNEST on its right-hand chain, i.e. without RIGHT / FULL joins and
   * parenthesised joins on a right-hand side (see needsRealUnnest).
   */
  readonly realUnnest?: boolean;
}

/** Whether a FROM clause has a RIGHT or FULL join, or a parenthesised join as a right operand. */
export function needsRealUnnest(item: F.FromItem): boolean {
  if (item.kind !== 'join') return false;
  return item.type === 'RIGHT' || item.type === 'FULL' || item.right.kind === 'join' || needsRealUnnest(item.left);
}

type FromResolver<K extends F.FromKind> = (item: Extract<F.FromItem, { kind: K }>, link: JoinLink, guards: PgExpr[]) => PgFrom | undefined;

/**
 * FROM items, attached left to right (joins are left-deep). UNNEST of a record array that always
 * held one object is not joined at all: its alias stands for `array->0`, read by path, and
 * CROSS/INNER semantics (drop rows without the record) become an `IS NOT NULL` guard in `guards`.
 */
const FROM_RESOLVERS: { [K in F.FromKind]: FromResolver<K> } = {
  join: (j, link, guards) => {
    if (link.left !== undefined) {
      // A parenthesised join on the right of another join: built on its own, then joined as one item.
      const group = resolveFromItem(j, { ...link, left: undefined, type: 'COMMA', on: undefined, using: [] }, guards);
      if (!group) throw new SqlUnsupportedError('a parenthesised join must start with a table', link.ctx.text, j.pos);
      return join(link, group);
    }
    const left = resolveFromItem(j.left, link, guards);
    return resolveFromItem(j.right, { ...link, left, type: j.type, on: j.on, using: j.using }, guards);
  },

  unnest: (item, link, guards) => {
    const { scope, ctx, type, on } = link;
    if (type === 'RIGHT' || type === 'FULL')
      throw new SqlUnsupportedError(`UNNEST cannot be the right side of a ${type} JOIN (nor in BigQuery)`, ctx.text, item.pos);
    let array = resolveExpr(item.expr, scope, ctx);
    // A field no event has brought yet: unnested as the array of records it would be (no rows until then).
    if (array.unknownJson) array = typed(array.unknownJson, { kind: 'jsonArray', element: { kind: 'record' }, single: false });
    const pgArray = array.type.kind === 'array';
    if (array.type.kind === 'array') {
      // A Postgres array (a literal, array_agg, split): its elements as JSON, read back with their type.
      array = typed(pg.func('to_jsonb', [array.sql]), { kind: 'jsonArray', element: jsonStoredType(array.type.element), single: false });
    }
    if (array.type.kind !== 'jsonArray') {
      throw new SqlUnsupportedError(
        `UNNEST needs an array field of a source; got ${array.type.kind === 'scalar' ? array.type.name : 'a computed array'}`,
        ctx.text,
        item.expr.pos,
      );
    }
    const names = [item.alias ?? implicitAlias(item.expr) ?? ctx.translation.alias()];
    const trueOn = on === undefined || (on.kind === 'literal' && on.value === true);
    if (
      ctx.translation.optimise &&
      array.type.single &&
      array.type.element.kind === 'record' &&
      (link.realUnnest ? type === 'LEFT' && trueOn : type !== 'LEFT' || trueOn)
    ) {
      const value = typed(pg.op('->', array.sql, pg.number('0')), array.type.element, array.hot && { hot: array.hot });
      scope.ranges.push({ kind: 'value', names, value });
      if (type !== 'LEFT') {
        // perf: this guard implies the guards of the records it is read through (`m->'response'->0`
        // is NULL whenever `m` is), so those are dropped. Left in, the planner (cheapest qual first,
        // ties in written order) ran `metadata->0 IS NOT NULL` before `project = $1` and detoasted
        // every row of the window (BENCHMARKS.md, "guards").
        for (let i = guards.length - 1; i >= 0; i--) {
          const record = guardedRecord(guards[i]!);
          if (record && readsThrough(value.sql, record)) guards.splice(i, 1);
        }
        guards.push(recordGuard(value.sql, value.hot));
        const condition = joinCondition(link);
        if (condition) guards.push(condition);
      }
      return link.left;
    }
    const alias = ctx.translation.alias();
    const record = array.type.element.kind === 'record';
    const column = pg.column(alias, 'value');
    const value = record ? typed(column, array.type.element) : fromJsonText(column, array.type.element);
    // jsonb_array_elements raises on a non-array; a stray scalar must behave like a missing array.
    const arg = pgArray
      ? array.sql
      : pg.case([{ when: pg.op('=', pg.func('jsonb_typeof', [array.sql]), pg.literal('array')), then: array.sql }]);
    scope.ranges.push({ kind: 'value', names, value });
    return join(link, { kind: 'function', fn: record ? 'jsonb_array_elements' : 'jsonb_array_elements_text', arg, alias, column: 'value' });
  },

  derived: (item, link) => {
    // A derived table cannot see the FROM items before it (BigQuery has no LATERAL subqueries), only outer queries.
    const r = exposeHotColumns(resolveQuery(item.query, link.ctx, link.scope.parent));
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
      throw new SqlSandboxError(
        `table ${item.name} is not allowed here: a sandboxed query may only read the endpoint's CTEs (${cteNames.join(', ')})`,
        ctx.text,
        item.pos,
      );
    }
    const source = ctx.sources(item.name);
    // Without an alias, both the full name and its last part qualify columns (`prod.id`).
    const parts = item.name.split('.');
    if (!source) {
      // Then an endpoint (endpoint text only), as a derived table.
      const found = resolveEndpointTable(item, ctx);
      const endpoint = found && exposeHotColumns(found);
      if (!endpoint) throw new SqlNameError(`unknown table ${item.name}${didYouMean(item.name, cteNames)}`, ctx.text, item.pos);
      scope.ranges.push({
        kind: 'relation',
        names: item.alias ? [item.alias] : [item.name, parts[parts.length - 1]!],
        alias,
        columns: endpoint.columns,
      });
      return join(link, { kind: 'derived', query: endpoint.query, alias });
    }
    scope.ranges.push({ kind: 'source', names: item.alias ? [item.alias] : [item.name, parts[parts.length - 1]!], alias, source });
    return join(link, { kind: 'table', schema: source.schema, name: source.table, alias });
  },
};

/** Whether `expr` is a `->` read through `inner` (structurally equal), so `inner IS NULL` makes it NULL. */
/**
 * The guards without those that a WHERE conjunct implies: a strict comparison of a leaf read
 * from the guarded record (`(r->>'status_code')::bigint >= 500`) is never true when the record is
 * NULL, so `r IS NOT NULL` drops no row the conjunct keeps. perf: each guard reads the record
 * again, one more decompression of `metadata` per row (BENCHMARKS.md, fix 6).
 */
export function dropImpliedGuards(guards: readonly PgExpr[], where: PgExpr | undefined): PgExpr[] {
  if (!where) return [...guards];
  const conjuncts = andOperands(where);
  return guards.filter((g) => {
    const record = guardedRecord(g);
    return !(record && conjuncts.some((c) => rejectsNull(c, record)));
  });
}

function andOperands(e: PgExpr): PgExpr[] {
  return e.kind === 'andOr' && e.op === 'AND' ? e.operands.flatMap(andOperands) : [e];
}

/** Built-in operators that are strict (NULL in, NULL out), so a NULL leaf never passes; strict functions are catalogue.ts's. */
const STRICT_COMPARISONS = new Set(['=', '<>', '<', '<=', '>', '>=', '~', '~*', '~~', '!~~']);
const JSON_READS = new Set(['->', '->>', '#>', '#>>']);

/** Whether `condition` is NULL (so not true) whenever `record` is NULL. */
function rejectsNull(condition: PgExpr, record: PgExpr): boolean {
  switch (condition.kind) {
    case 'op':
      return STRICT_COMPARISONS.has(condition.op) && (readsFrom(condition.left, record) || readsFrom(condition.right, record));
    case 'is':
      return condition.test === 'NULL' && condition.negated && readsFrom(condition.operand, record);
    case 'in':
      return condition.list !== undefined && readsFrom(condition.operand, record);
    case 'between':
      return readsFrom(condition.operand, record);
    default:
      return false;
  }
}

/** Whether `e` is NULL whenever `record` is: a JSON read through it, under casts and strict functions of it. */
function readsFrom(e: PgExpr, record: PgExpr): boolean {
  if (e.kind === 'cast') return readsFrom(e.operand, record);
  if (e.kind === 'func') return isStrict(e.name) && e.args.some((a) => readsFrom(a, record));
  if (e.kind !== 'op' || !JSON_READS.has(e.op)) return false;
  return sameExpr(e.left, record) || readsFrom(e.left, record);
}

function readsThrough(expr: PgExpr, inner: PgExpr): boolean {
  for (let e = expr; e.kind === 'op' && e.op === '->'; e = e.left) {
    if (sameExpr(e.left, inner)) return true;
  }
  return false;
}

export function resolveFromItem(item: F.FromItem, link: JoinLink, guards: PgExpr[]): PgFrom | undefined {
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
    return { kind: 'join', type: type === 'COMMA' || type === 'CROSS' ? 'INNER' : type, left, right, using };
  }
  if (type === 'COMMA' || type === 'CROSS') return { kind: 'join', type: 'CROSS', left, right };
  return { kind: 'join', type, left, right, on: joinCondition(link) ?? pg.literal(true) };
}

function implicitAlias(e: E.Expr): string | undefined {
  return e.kind === 'path' ? e.parts[e.parts.length - 1] : undefined;
}
