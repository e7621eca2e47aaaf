/**
 * A rewrite for speed: a CTE's ORDER BY without LIMIT is dropped when no reader of the CTE can
 * observe the order of its rows.
 *
 * Why: `logs.all`'s CTEs end in `ORDER BY t.timestamp DESC`. A subquery with ORDER BY is not
 * pulled up into its reader, so the planner must produce the CTE's rows in that order (an
 * ordered index scan, or a sort of the whole window) even when the reader groups them or sorts
 * them itself: the edge chart and top paths spent 5–30% of their time there, and a sandboxed
 * `select id from edge_logs order by timestamp desc limit 100` sorted every row of the project
 * (1.3 s) instead of reading 100 rows from the index (BENCHMARKS.md).
 *
 * Same rows: order is observable only through the reader's output order or order-sensitive
 * aggregates. A reader qualifies when it is a plain SELECT (not a UNION branch) that has its own
 * ORDER BY, or that aggregates (GROUP BY or aggregates) and has no LIMIT, and that uses no
 * aggregate whose result depends on input order (`array_agg`, `string_agg`, `jsonb_agg` without
 * their own ORDER BY; any function functions.ts does not know counts as one) nor any window function (its numbering, ties and frames follow input
 * order, whatever the reader's ORDER BY); or when it is the query of an EXISTS or IN (…) without LIMIT. A CTE with
 * any other reader, or one read from inside another CTE, keeps its ORDER BY.
 */
import type { PgExpr, PgFrom, PgQuery, PgSelect } from './ast.js';
import { some } from './transform.js';
import { isAggregate, isOrderSensitive } from './functions.js';
import { offsetsNothing } from './narrow.js';

/** `query` with the ORDER BY of its top-level CTEs dropped where no reader can observe it. */
export function dropUnobservableCteOrder(query: PgQuery): PgQuery {
  const candidates = new Set(query.ctes.filter((c) => c.query.orderBy.length && !c.query.limit && !c.query.offset).map((c) => c.name));
  if (!candidates.size) return query;
  const keep = new Set<string>();
  // A CTE read by another CTE keeps its order: the reading CTE may be ordered in turn, and
  // following chains is not worth the risk.
  for (const cte of query.ctes) visitQuery(cte.query, candidates, () => false, keep, true);
  visitQuery({ ...query, ctes: [] }, candidates, () => false, keep, false);
  if ([...candidates].every((name) => keep.has(name))) return query;
  return {
    ...query,
    ctes: query.ctes.map((c) => (candidates.has(c.name) && !keep.has(c.name) ? { ...c, query: { ...c.query, orderBy: [] } } : c)),
  };
}

/**
 * Marks in `keep` every candidate CTE read where its order may show. `insensitive` tells whether
 * the enclosing context ignores the order of this query's rows (EXISTS, IN).
 */
function visitQuery(q: PgQuery, candidates: ReadonlySet<string>, insensitive: () => boolean, keep: Set<string>, keepAll: boolean): void {
  for (const cte of q.ctes) visitQuery(cte.query, candidates, () => false, keep, keepAll);
  const body = q.body;
  if (body.kind === 'query') return visitQuery(body, candidates, () => false, keep, keepAll);
  if (body.kind === 'setOp') {
    for (const branch of [body.left, body.right])
      visitQuery({ kind: 'query', ctes: [], body: branch, orderBy: [] }, candidates, () => false, keep, keepAll);
    return;
  }
  const orderFree = !keepAll && readerIgnoresOrder(q, body, insensitive());
  visitFrom(body.from, candidates, orderFree, keep, keepAll);
  const exprs = [
    ...body.targets.map((t) => t.expr),
    ...(body.where ? [body.where] : []),
    ...body.groupBy,
    ...(body.having ? [body.having] : []),
    ...q.orderBy.map((o) => o.expr),
  ];
  for (const e of exprs) visitSubqueries(e, candidates, keep, keepAll);
}

function readerIgnoresOrder(q: PgQuery, s: PgSelect, insensitive: boolean): boolean {
  const exprs = [...s.targets.map((t) => t.expr), ...(s.having ? [s.having] : []), ...q.orderBy.map((o) => o.expr)];
  // A window function sees its input order: `row_number() over ()`, ties under its ORDER BY, a ROWS frame.
  if (exprs.some((e) => some(e, (n) => n.kind === 'func' && n.over !== undefined))) return false;
  if (exprs.some((e) => some(e, (n) => n.kind === 'func' && isOrderSensitive(n.name) && !n.orderBy?.length))) return false;
  if (q.orderBy.length) return true;
  // OFFSET NULL is the fence of narrow.ts (OFFSET 0 skips nothing either); any other LIMIT or OFFSET picks rows by their order.
  if (q.limit || !offsetsNothing(q.offset)) return false;
  if (insensitive) return true;
  return !s.distinct && (s.groupBy.length > 0 || exprs.some((e) => some(e, (n) => n.kind === 'func' && isAggregate(n.name))));
}

function visitFrom(
  from: PgFrom | undefined,
  candidates: ReadonlySet<string>,
  orderFree: boolean,
  keep: Set<string>,
  keepAll: boolean,
): void {
  if (!from) return;
  switch (from.kind) {
    case 'table':
      if (from.schema === undefined && candidates.has(from.name) && !orderFree) keep.add(from.name);
      return;
    case 'derived':
      // A derived table passes its rows up: it ignores their order only if it, or its reader, does.
      return visitQuery(from.query, candidates, () => orderFree, keep, keepAll);
    case 'function':
      return visitSubqueries(from.arg, candidates, keep, keepAll);
    case 'join':
      visitFrom(from.left, candidates, orderFree, keep, keepAll);
      visitFrom(from.right, candidates, orderFree, keep, keepAll);
      if (from.on) visitSubqueries(from.on, candidates, keep, keepAll);
  }
}

/** Subqueries inside an expression: EXISTS and IN ignore the order of their rows; a scalar subquery does not (LIMIT 1 picks a row). */
function visitSubqueries(e: PgExpr, candidates: ReadonlySet<string>, keep: Set<string>, keepAll: boolean): void {
  some(e, (n) => {
    if (n.kind === 'subquery') visitQuery(n.query, candidates, () => !!n.exists, keep, keepAll);
    else if (n.kind === 'in' && n.query) visitQuery(n.query, candidates, () => true, keep, keepAll);
    return false;
  });
}
