/**
 * FROM clauses: sources, CTEs, derived tables and UNNEST, attached left to right.
 */
import type * as E from '../ast/expressions.js';
import type * as F from '../ast/from.js';
import { SqlNameError, SqlSandboxError, SqlUnsupportedError, didYouMean } from '../errors.js';
import { pg, type PgExpr, type PgFrom } from '../postgres/ast.js';
import { INT64, typed } from '../types.js';
import { expectBool, resolveExpr } from './expressions.js';
import { fromJsonText } from '../coerce.js';
import { resolveEndpointTable } from './endpoints.js';
import { jsonStoredType } from './structs.js';
import type { Context, Scope } from './scope.js';
import { exposeHotColumns, recordGuard } from './hot.js';

/** The join being built: what is on its left and how the next item attaches. */
export interface JoinLink {
  readonly left: PgFrom | undefined;
  readonly type: F.JoinType;
  readonly on: E.Expr | undefined;
  readonly using: readonly string[];
  readonly scope: Scope;
  readonly ctx: Context;
}

type FromResolver<K extends F.FromKind> = (item: Extract<F.FromItem, { kind: K }>, link: JoinLink) => PgFrom | undefined;

/**
 * FROM items, attached left to right (joins are left-deep). UNNEST is always a lateral join here;
 * the pass of postgres/singleRecord.ts reads single records by path afterwards.
 */
const FROM_RESOLVERS: { [K in F.FromKind]: FromResolver<K> } = {
  join: (j, link) => {
    if (link.left !== undefined) {
      // A parenthesised join on the right of another join: built on its own, then joined as one item.
      const group = resolveFromItem(j, { ...link, left: undefined, type: 'COMMA', on: undefined, using: [] });
      if (!group) throw new SqlUnsupportedError('a parenthesised join must start with a table', link.ctx.text, j.pos);
      return join(link, group);
    }
    const left = resolveFromItem(j.left, link);
    return resolveFromItem(j.right, { ...link, left, type: j.type, on: j.on, using: j.using });
  },

  unnest: (item, link) => {
    const { scope, ctx, type } = link;
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
    const alias = ctx.translation.alias();
    const record = array.type.element.kind === 'record';
    const column = pg.column(alias, 'value');
    // A record array that always held one object (the source schema): its leaves may have hot
    // columns (resolve/hot.ts), read through the row's table whether the record is joined or read
    // by path; the mark is for the pass that reads it by path instead (postgres/singleRecord.ts).
    const single =
      record && array.type.single && !item.offset
        ? typed(pg.op('->', array.sql, pg.number('0')), array.type.element, array.hot && { hot: array.hot })
        : undefined;
    const value = record ? typed(column, array.type.element, single?.hot && { hot: single.hot }) : fromJsonText(column, array.type.element);
    // jsonb_array_elements raises on a non-array; a stray scalar must behave like a missing array.
    const arg = pgArray
      ? array.sql
      : pg.case([{ when: pg.op('=', pg.func('jsonb_typeof', [array.sql]), pg.literal('array')), then: array.sql }]);
    scope.ranges.push({ kind: 'value', names, value });
    const ordinality = item.offset === undefined ? undefined : 'n';
    if (item.offset !== undefined)
      scope.ranges.push({
        kind: 'value',
        names: [item.offset],
        value: typed(pg.cast(pg.op('-', pg.column(alias, 'n'), pg.number('1')), 'bigint'), INT64),
      });
    return join(link, {
      kind: 'function',
      fn: record ? 'jsonb_array_elements' : 'jsonb_array_elements_text',
      arg,
      alias,
      column: 'value',
      ...(ordinality && { ordinality }),
      ...(single && { single: { value: single.sql, guard: recordGuard(single.sql, single.hot) } }),
    });
  },

  derived: (item, link) => {
    // A derived table cannot see the FROM items before it (BigQuery has no LATERAL subqueries), only outer queries.
    const r = exposeHotColumns(link.ctx.resolveQuery(item.query, link.ctx, link.scope.parent));
    const alias = link.ctx.translation.alias();
    link.scope.ranges.push({
      kind: 'relation',
      names: item.alias ? [item.alias] : [],
      alias,
      columns: r.columns,
      eventSource: r.eventSource,
    });
    return join(link, { kind: 'derived', query: r.query, alias });
  },

  table: (item, link) => {
    const { scope, ctx } = link;
    const alias = ctx.translation.alias();
    const cte = ctx.ctes.get(item.name.toLowerCase());
    if (cte) {
      scope.ranges.push({ kind: 'relation', names: [item.alias ?? item.name], alias, columns: cte.columns, eventSource: cte.eventSource });
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
        names: item.alias ? [item.alias] : [item.name, parts[parts.length - 1]],
        alias,
        columns: endpoint.columns,
      });
      return join(link, { kind: 'derived', query: endpoint.query, alias });
    }
    scope.ranges.push({ kind: 'source', names: item.alias ? [item.alias] : [item.name, parts[parts.length - 1]], alias, source });
    if (source.commonTrigrams) ctx.translation.commonTrigrams.set(alias, source.commonTrigrams);
    if (source.rareTrigramIndexes) ctx.translation.rareTrigramIndexes.set(alias, source.rareTrigramIndexes);
    return join(link, { kind: 'table', schema: source.pgSchema, name: source.table, alias });
  },
};

export function resolveFromItem(item: F.FromItem, link: JoinLink): PgFrom | undefined {
  return (FROM_RESOLVERS[item.kind] as FromResolver<F.FromKind>)(item, link);
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
