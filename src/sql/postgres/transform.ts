/**
 * Generic walks over Postgres expressions, one entry per node kind, for pure node → node rewrites.
 * Subqueries are opaque: their expressions belong to another scope.
 */
import type * as P from './ast.js';

type Children<K extends P.PgExprKind> = (node: Extract<P.PgExpr, { kind: K }>) => readonly P.PgExpr[];
type Rebuild<K extends P.PgExprKind> = (node: Extract<P.PgExpr, { kind: K }>, f: (e: P.PgExpr) => P.PgExpr) => P.PgExpr;

const none = (): readonly P.PgExpr[] => [];
const orderExprs = (items: readonly P.PgOrder[] | undefined): P.PgExpr[] => (items ?? []).map((o) => o.expr);
const mapOrder = (items: readonly P.PgOrder[] | undefined, f: (e: P.PgExpr) => P.PgExpr): P.PgOrder[] | undefined =>
  items && items.map((o) => ({ ...o, expr: f(o.expr) }));

const CHILDREN: { [K in P.PgExprKind]: Children<K> } = {
  column: none, literal: none, param: none, subquery: none,
  op: (n) => [n.left, n.right],
  not: (n) => [n.operand],
  neg: (n) => [n.operand],
  andOr: (n) => n.operands,
  is: (n) => [n.operand],
  func: (n) => [...n.args, ...(n.filter ? [n.filter] : []), ...orderExprs(n.orderBy), ...orderExprs(n.withinGroup)],
  cast: (n) => [n.operand],
  case: (n) => [...(n.operand ? [n.operand] : []), ...n.whens.flatMap((w) => [w.when, w.then]), ...(n.otherwise ? [n.otherwise] : [])],
  in: (n) => [n.operand, ...(n.list ?? [])],
  between: (n) => [n.operand, n.low, n.high],
  subscript: (n) => [n.base, n.index],
  array: (n) => n.items,
  extract: (n) => [n.operand],
};

const REBUILD: { [K in P.PgExprKind]: Rebuild<K> } = {
  column: (n) => n, literal: (n) => n, param: (n) => n, subquery: (n) => n,
  op: (n, f) => ({ ...n, left: f(n.left), right: f(n.right) }),
  not: (n, f) => ({ ...n, operand: f(n.operand) }),
  neg: (n, f) => ({ ...n, operand: f(n.operand) }),
  andOr: (n, f) => ({ ...n, operands: n.operands.map(f) }),
  is: (n, f) => ({ ...n, operand: f(n.operand) }),
  func: (n, f) => ({ ...n, args: n.args.map(f), filter: n.filter && f(n.filter), orderBy: mapOrder(n.orderBy, f), withinGroup: mapOrder(n.withinGroup, f) }),
  cast: (n, f) => ({ ...n, operand: f(n.operand) }),
  case: (n, f) => ({ ...n, operand: n.operand && f(n.operand), whens: n.whens.map((w) => ({ when: f(w.when), then: f(w.then) })), otherwise: n.otherwise && f(n.otherwise) }),
  in: (n, f) => ({ ...n, operand: f(n.operand), list: n.list?.map(f) }),
  between: (n, f) => ({ ...n, operand: f(n.operand), low: f(n.low), high: f(n.high) }),
  subscript: (n, f) => ({ ...n, base: f(n.base), index: f(n.index) }),
  array: (n, f) => ({ ...n, items: n.items.map(f) }),
  extract: (n, f) => ({ ...n, operand: f(n.operand) }),
};

/** The direct sub-expressions of a node. */
export function children(node: P.PgExpr): readonly P.PgExpr[] {
  return (CHILDREN[node.kind] as Children<P.PgExprKind>)(node);
}

/** The node with `f` applied to each direct sub-expression. */
export function mapChildren(node: P.PgExpr, f: (e: P.PgExpr) => P.PgExpr): P.PgExpr {
  return (REBUILD[node.kind] as Rebuild<P.PgExprKind>)(node, f);
}

/** True when `test` holds for the node or any node below it (not looking into subqueries). */
export function some(node: P.PgExpr, test: (e: P.PgExpr) => boolean): boolean {
  return test(node) || children(node).some((c) => some(c, test));
}
