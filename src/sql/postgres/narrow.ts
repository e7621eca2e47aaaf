/**
 * A rewrite for speed: an aggregating SELECT that reads JSON leaves gets its row-level
 * expressions computed in an inner query fenced by `OFFSET NULL`, so the rows Postgres sorts or
 * hashes for GROUP BY carry a few small values instead of whole `metadata` documents.
 *
 * Why: Postgres expects almost no rows to match `url ~ @project` and may sort whole rows before
 * grouping; with 1.5 KB of metadata per row that spilled about 1.2 GB (docs/ARCHITECTURE.md,
 * "Measured facts behind the design"). An OFFSET
 * stops the planner from pulling the inner query up again. WHERE stays inside, so partition
 * pruning and the timestamp index are untouched.
 *
 * Why NULL and not 0 (both mean no offset): Postgres decides whether the query above may read a
 * subquery in FROM in parallel workers before it folds the subquery's constants (allpaths.c
 * set_rel_consider_parallel, limit_needed). There `OFFSET 0` is still the cast `int8(0)`, "a
 * non-constant offset", so no narrowed aggregate ever ran in parallel; `OFFSET NULL` is parsed as a
 * NULL constant, which limit_needed takes for no offset, and it still keeps the subquery from
 * being pulled up (prepjointree.c is_simple_subquery looks for any OFFSET). Measured on
 * lq_bench_10m, the API report's top routes over 7 days alone: 3.9 s on one core, 2.0 s with a
 * worker (BENCHMARKS.md, "Studio's pages").
 *
 *   SELECT date_trunc(…t0.timestamp…) AS ts, count(*) FILTER (WHERE strpos(t0.metadata->…, '/rest') > 0) … GROUP BY 1
 *   → SELECT s.c0 AS ts, count(*) FILTER (WHERE s.c1) … FROM (SELECT date_trunc(…) AS c0, (strpos(…) > 0) AS c1 FROM … WHERE … OFFSET NULL) AS s GROUP BY 1
 */
import { pg, type PgExpr, type PgFrom, type PgOrder, type PgQuery, type PgSelect } from './ast.js';
import { mapChildren, sameExpr, some } from './transform.js';
import { mapNodes } from '../walk.js';
import { evaluatesAllArguments, isAggregate as isAggregateFunction, mayFail as callMayFail, pgFunction } from './functions.js';

const JSON_OPERATORS = new Set(['->', '->>', '#>', '#>>']);

/** The fence's offset (module comment: NULL, not 0, so the narrowed query may run in parallel). */
const FENCE = pg.literal(null);

/** Whether a query's OFFSET skips no row: the fence, or a user's own `OFFSET 0` (either keeps the rows' order unobservable). */
export function offsetsNothing(offset: PgExpr | undefined): boolean {
  return offset === undefined || (offset.kind === 'literal' && (offset.value === null || offset.value === 0));
}

const isAggregate = (e: PgExpr): boolean => e.kind === 'func' && isAggregateFunction(e.name);
/** A call the catalogue does not know: it might aggregate, so the query is left alone. */
const isUnknownCall = (e: PgExpr): boolean => e.kind === 'func' && pgFunction(e.name) === undefined;
const isSubquery = (e: PgExpr): boolean => e.kind === 'subquery' || (e.kind === 'in' && e.query !== undefined);
const readsJson = (e: PgExpr): boolean => e.kind === 'op' && JSON_OPERATORS.has(e.op);
const isWindow = (e: PgExpr): boolean => e.kind === 'func' && e.over !== undefined;

/** Every query of the tree with its aggregate input narrowed, the innermost first (an outer query sees its inner ones narrowed). */
export function narrowAggregates(query: PgQuery, newAlias: () => string): PgQuery {
  return mapNodes(query, (n) => (n.kind === 'query' ? narrowAggregateInput(n as unknown as PgQuery, newAlias) : n));
}

/** `query` with its SELECT's aggregate input narrowed, or `query` unchanged when the rewrite does not apply or would not help. */
export function narrowAggregateInput(query: PgQuery, newAlias: () => string): PgQuery {
  const select = query.body;
  if (select.kind !== 'select' || !select.from || !select.groupBy.length) return query;
  const outside = [
    ...select.targets.map((t) => t.expr),
    ...select.groupBy,
    ...(select.having ? [select.having] : []),
    ...query.orderBy.map((o) => o.expr),
  ];
  if (!outside.some((e) => some(e, readsJson))) return query;
  // Window functions run over the grouped rows and may order or partition by anything of them; left as they are.
  if (outside.some((e) => some(e, isWindow))) return query;
  const local = new Set(fromAliases(select.from));
  const isLocal = (e: PgExpr): boolean => e.kind === 'column' && e.table !== undefined && local.has(e.table);
  // Subqueries and unqualified (JOIN USING) columns would need scope analysis; leave those queries alone.
  if (outside.some((e) => some(e, (n) => isSubquery(n) || (n.kind === 'column' && n.table === undefined) || isUnknownCall(n))))
    return query;
  const alias = newAlias();
  // Records whose UNNEST guard (`r IS NOT NULL`) can move out with them (see narrow()).
  const records = (select.where ? andOperands(select.where) : []).flatMap((c) =>
    c.kind === 'is' && c.test === 'NULL' && c.negated && readsJson(c.operand) && outside.some((e) => some(e, (n) => sameExpr(n, c.operand)))
      ? [c.operand]
      : [],
  );
  return (records.length && narrow(query, select, alias, isLocal, records)) || narrow(query, select, alias, isLocal, [])!;
}

/**
 * The narrowed query. With `records`: each guarded record the select list reads is itself an
 * inner column, its guard is tested in the outer query, and its leaves are read there from the
 * small record instead of from `metadata` (perf: the guard and every leaf read decompress
 * `metadata` again; BENCHMARKS.md, fix 7). Without the guard the inner query computes
 * its columns for rows the guard drops too, so this is done only when none of them can fail
 * (undefined otherwise).
 */
function narrow(
  query: PgQuery,
  select: PgSelect,
  alias: string,
  isLocal: (e: PgExpr) => boolean,
  records: readonly PgExpr[],
): PgQuery | undefined {
  const isRecord = (e: PgExpr): boolean => records.some((r) => sameExpr(r, e));
  const viaRecord = (e: PgExpr): boolean => records.length > 0 && some(e, isRecord);
  // GROUP BY expressions move inward first, so equal expressions elsewhere reuse their column.
  const keys = select.groupBy.filter((g) => !isOrdinal(g));
  const projections: { expr: PgExpr; name: string }[] = [];
  const column = (e: PgExpr): PgExpr => {
    const existing = projections.find((p) => sameExpr(p.expr, e));
    const name = existing ? existing.name : `c${projections.push({ expr: e, name: `c${projections.length}` }) - 1}`;
    return pg.column(alias, name);
  };
  // A row-level expression as the outer query sees it: an inner column (an expression already
  // projected reuses its column), or, for one that reads a moved record, that expression over
  // the record's column.
  // Parts that do not read a moved record (`t0.id` in `CASE WHEN r.status >= 500 THEN t0.id END`)
  // become inner columns of their own: the outer query cannot name the inner query's tables.
  const fromRecord = (e: PgExpr): PgExpr => {
    if (isRecord(e)) return column(e);
    if (!some(e, isRecord)) return some(e, isLocal) ? column(e) : e;
    return mapChildren(e, fromRecord);
  };
  const project = (e: PgExpr): PgExpr => (viaRecord(e) ? fromRecord(e) : column(e));
  for (const k of keys) project(k);

  // Inside an aggregate every row-level subtree can move inward as a whole; one that reads JSON
  // is split down to its leaf reads when every part of it is evaluated anyway, so a leaf that
  // several aggregates test (`status < 400`, `status >= 500`) is read once per row, not once per
  // test (perf: each read decompresses `metadata` again; BENCHMARKS.md).
  // AND / OR may skip an operand, so they are split only when every leaf they read is read for
  // every row anyway (read by another test); `prime` projects those first.
  const isProjected = (e: PgExpr): boolean => viaRecord(e) || projections.some((p) => sameExpr(p.expr, e));
  const inside = (e: PgExpr): PgExpr => {
    if (some(e, isAggregate)) return mapChildren(e, inside);
    if (!some(e, isLocal)) return e;
    if (!some(e, readsJson) || isLeafRead(e)) return project(e);
    const split = evaluatesAllParts(e) || (e.kind === 'andOr' && leafReads(e).every(isProjected));
    return split ? mapChildren(e, inside) : project(e);
  };
  const prime = (e: PgExpr, inAggregate: boolean): void => {
    if (inAggregate && isLeafRead(e) && some(e, isLocal)) project(e);
    else if (!inAggregate || isAggregate(e) || evaluatesAllParts(e)) forEachChild(e, (c) => prime(c, inAggregate || isAggregate(e)));
  };
  // Outside aggregates only GROUP BY keys move as a whole (so the outer GROUP BY still matches);
  // other expressions are rebuilt around their grouped parts.
  const keyIndex = (e: PgExpr): number => keys.findIndex((k) => sameExpr(k, e));
  const byOrdinal = new Set(select.groupBy.filter(isOrdinal).map((g) => Number((g as { value: number }).value) - 1));
  const outer = (e: PgExpr): PgExpr => {
    if (isAggregate(e)) return mapChildren(e, inside);
    if (!some(e, isLocal)) return e;
    if (isLocal(e) || keyIndex(e) >= 0) return project(e);
    return mapChildren(e, outer);
  };

  for (const t of select.targets) prime(t.expr, false);
  const groupBy = select.groupBy.map((g) => (isOrdinal(g) ? g : project(g)));
  const grouped = (e: PgExpr): PgExpr => (some(e, isLocal) ? project(e) : e);
  const targets = select.targets.map((t, i) => ({
    name: t.name,
    expr: byOrdinal.has(i) && !some(t.expr, isAggregate) ? grouped(t.expr) : outer(t.expr),
  }));
  const having = select.having && outer(select.having);
  const orderBy: PgOrder[] = query.orderBy.map((o) => ({ ...o, expr: outer(o.expr) }));

  const conditions = select.where ? andOperands(select.where) : [];
  const innerWhere = conditions.filter((c) => !(c.kind === 'is' && isRecord(c.operand)));
  const guards = records.map((r) => pg.is(column(r), 'NULL', true));
  if (records.length && projections.some((p) => !isRecord(p.expr) && some(p.expr, mayFail))) return undefined;
  const inner: PgQuery = {
    kind: 'query',
    ctes: [],
    orderBy: [],
    offset: FENCE,
    body: {
      kind: 'select',
      distinct: false,
      targets: projections,
      from: select.from,
      where: records.length ? andOf(innerWhere) : select.where,
      groupBy: [],
    },
  };
  const where = guards.length ? pg.and(...guards) : undefined;
  const narrowed: PgSelect = {
    kind: 'select',
    distinct: select.distinct,
    targets,
    from: { kind: 'derived', query: inner, alias },
    where,
    groupBy,
    having,
  };
  return { ...query, body: narrowed, orderBy };
}

function andOperands(e: PgExpr): PgExpr[] {
  return e.kind === 'andOr' && e.op === 'AND' ? e.operands.flatMap(andOperands) : [e];
}

function andOf(conditions: PgExpr[]): PgExpr | undefined {
  return conditions.length ? pg.and(...conditions) : undefined;
}

/** Nodes that can raise an error for some row (a cast of a value, division, a regular expression, most functions: functions.ts). */
function mayFail(e: PgExpr): boolean {
  if (e.kind === 'cast') return e.operand.kind !== 'param' && e.operand.kind !== 'literal';
  if (e.kind === 'op') return !['=', '<>', '<', '<=', '>', '>=', '->', '->>', '#>', '#>>', '||'].includes(e.op);
  return e.kind === 'func' && callMayFail(e.name);
}

/** A JSON read, possibly cast: `(t.metadata->0->'response'->0->>'status_code')::bigint`. */
function isLeafRead(e: PgExpr): boolean {
  return readsJson(e) || (e.kind === 'cast' && isLeafRead(e.operand));
}

/**
 * Whether every part of `e` is evaluated whenever `e` is (functions: functions.ts). CASE,
 * COALESCE, AND, OR and IN lists may skip a part, and a part computed for every row in the inner
 * query could then raise an error (a failing cast) that the whole expression never reached.
 */
function evaluatesAllParts(e: PgExpr): boolean {
  switch (e.kind) {
    case 'op':
    case 'not':
    case 'neg':
    case 'is':
    case 'between':
    case 'cast':
      return true;
    case 'func':
      return evaluatesAllArguments(e.name) && !e.filter && !e.orderBy && !e.withinGroup;
    default:
      return false;
  }
}

/** The JSON reads of an expression that are not part of a longer read. */
function leafReads(e: PgExpr, out: PgExpr[] = []): PgExpr[] {
  if (isLeafRead(e)) out.push(e);
  else forEachChild(e, (c) => leafReads(c, out));
  return out;
}

function forEachChild(e: PgExpr, f: (child: PgExpr) => void): void {
  mapChildren(e, (c) => (f(c), c));
}

function isOrdinal(e: PgExpr): boolean {
  return e.kind === 'literal' && typeof e.value === 'number';
}

export function fromAliases(from: PgFrom): string[] {
  return from.kind === 'join' ? [...fromAliases(from.left), ...fromAliases(from.right)] : [from.alias];
}
