/**
 * Generic walks over Postgres expressions, one entry per node kind, for pure node → node rewrites.
 * Subqueries are opaque: their expressions belong to another scope.
 */
import type * as P from './ast.js';

type Some<K extends P.PgExprKind> = (node: Extract<P.PgExpr, { kind: K }>, test: (e: P.PgExpr) => boolean) => boolean;
type Rebuild<K extends P.PgExprKind> = (node: Extract<P.PgExpr, { kind: K }>, f: (e: P.PgExpr) => P.PgExpr) => P.PgExpr;

const never = (): boolean => false;
const anyOrder = (items: readonly P.PgOrder[] | undefined, test: (e: P.PgExpr) => boolean): boolean =>
  !!items?.some((o) => some(o.expr, test));
const mapOrder = (items: readonly P.PgOrder[] | undefined, f: (e: P.PgExpr) => P.PgExpr): P.PgOrder[] | undefined =>
  items && items.map((o) => ({ ...o, expr: f(o.expr) }));

/** Whether `test` holds below a node; a table of checks rather than child arrays, so the walk allocates nothing. */
const SOME_BELOW: { [K in P.PgExprKind]: Some<K> } = {
  column: never,
  literal: never,
  param: never,
  subquery: never,
  op: (n, t) => some(n.left, t) || some(n.right, t),
  not: (n, t) => some(n.operand, t),
  neg: (n, t) => some(n.operand, t),
  andOr: (n, t) => n.operands.some((o) => some(o, t)),
  is: (n, t) => some(n.operand, t),
  func: (n, t) =>
    n.args.some((a) => some(a, t)) ||
    (!!n.filter && some(n.filter, t)) ||
    anyOrder(n.orderBy, t) ||
    anyOrder(n.withinGroup, t) ||
    (!!n.over && someInWindow(n.over, t)),
  cast: (n, t) => some(n.operand, t),
  case: (n, t) =>
    (!!n.operand && some(n.operand, t)) ||
    n.whens.some((w) => some(w.when, t) || some(w.then, t)) ||
    (!!n.otherwise && some(n.otherwise, t)),
  in: (n, t) => some(n.operand, t) || !!n.list?.some((i) => some(i, t)),
  between: (n, t) => some(n.operand, t) || some(n.low, t) || some(n.high, t),
  subscript: (n, t) => some(n.base, t) || some(n.index, t) || (!!n.upper && some(n.upper, t)),
  array: (n, t) => n.items.some((i) => some(i, t)),
  extract: (n, t) => some(n.operand, t),
  any: (n, t) => some(n.operand, t) || some(n.array, t),
};

function someInWindow(w: P.PgWindow, t: (e: P.PgExpr) => boolean): boolean {
  return (
    w.partitionBy.some((p) => some(p, t)) ||
    anyOrder(w.orderBy, t) ||
    (!!w.frame && ((!!w.frame.start.offset && some(w.frame.start.offset, t)) || (!!w.frame.end.offset && some(w.frame.end.offset, t))))
  );
}

function mapWindow(w: P.PgWindow, f: (e: P.PgExpr) => P.PgExpr): P.PgWindow {
  return { ...w, partitionBy: w.partitionBy.map(f), orderBy: mapOrder(w.orderBy, f)! };
}

const REBUILD: { [K in P.PgExprKind]: Rebuild<K> } = {
  column: (n) => n,
  literal: (n) => n,
  param: (n) => n,
  subquery: (n) => n,
  op: (n, f) => ({ ...n, left: f(n.left), right: f(n.right) }),
  not: (n, f) => ({ ...n, operand: f(n.operand) }),
  neg: (n, f) => ({ ...n, operand: f(n.operand) }),
  andOr: (n, f) => ({ ...n, operands: n.operands.map(f) }),
  is: (n, f) => ({ ...n, operand: f(n.operand) }),
  func: (n, f) => ({
    ...n,
    args: n.args.map(f),
    filter: n.filter && f(n.filter),
    orderBy: mapOrder(n.orderBy, f),
    withinGroup: mapOrder(n.withinGroup, f),
    over: n.over && mapWindow(n.over, f),
  }),
  cast: (n, f) => ({ ...n, operand: f(n.operand) }),
  case: (n, f) => ({
    ...n,
    operand: n.operand && f(n.operand),
    whens: n.whens.map((w) => ({ when: f(w.when), then: f(w.then) })),
    otherwise: n.otherwise && f(n.otherwise),
  }),
  in: (n, f) => ({ ...n, operand: f(n.operand), list: n.list?.map(f) }),
  between: (n, f) => ({ ...n, operand: f(n.operand), low: f(n.low), high: f(n.high) }),
  subscript: (n, f) => ({ ...n, base: f(n.base), index: f(n.index), upper: n.upper && f(n.upper) }),
  array: (n, f) => ({ ...n, items: n.items.map(f) }),
  extract: (n, f) => ({ ...n, operand: f(n.operand) }),
  any: (n, f) => ({ ...n, operand: f(n.operand), array: f(n.array) }),
};

/** The node with `f` applied to each direct sub-expression. */
export function mapChildren(node: P.PgExpr, f: (e: P.PgExpr) => P.PgExpr): P.PgExpr {
  return (REBUILD[node.kind] as Rebuild<P.PgExprKind>)(node, f);
}

/** True when `test` holds for the node or any node below it (not looking into subqueries). */
export function some(node: P.PgExpr, test: (e: P.PgExpr) => boolean): boolean {
  return test(node) || (SOME_BELOW[node.kind] as Some<P.PgExprKind>)(node, test);
}

/** Structural equality of two expression trees (nodes are plain data, so a generic deep compare). */
export function sameExpr(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => sameExpr((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
