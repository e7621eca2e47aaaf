/**
 * Builders of the translator's BigQuery syntax tree (src/sql/ast/) for the LQL front end. Every
 * node carries the offset of the LQL clause it comes from, so the translator's own errors
 * (a type clash, an unknown CTE column) point into the LQL text.
 */
import type * as E from '../sql/ast/expressions.js';
import type * as F from '../sql/ast/from.js';
import type * as Q from '../sql/ast/queries.js';

export const path = (pos: number, ...parts: string[]): E.Path => ({ kind: 'path', pos, parts });
export const str = (pos: number, value: string): E.Literal => ({ kind: 'literal', pos, type: 'STRING', value });
export const num = (pos: number, value: string, type: 'INT64' | 'FLOAT64' = 'INT64'): E.Literal => ({ kind: 'literal', pos, type, value });
export const bool = (pos: number, value: boolean): E.Literal => ({ kind: 'literal', pos, type: 'BOOL', value });
export const timestamp = (pos: number, iso: string): E.Cast => ({
  kind: 'cast',
  pos,
  operand: str(pos, iso),
  type: 'TIMESTAMP',
  safe: false,
});
export const cast = (pos: number, operand: E.Expr, type: E.CastType): E.Cast => ({ kind: 'cast', pos, operand, type, safe: false });
export const binary = (pos: number, op: E.BinaryOp, left: E.Expr, right: E.Expr): E.Binary => ({ kind: 'binary', pos, op, left, right });
export const not = (pos: number, operand: E.Expr): E.Unary => ({ kind: 'unary', pos, op: 'NOT', operand });
export const isNull = (pos: number, operand: E.Expr, negated = false): E.IsTest => ({ kind: 'is', pos, operand, test: 'NULL', negated });
export const like = (pos: number, operand: E.Expr, pattern: string): E.Like => ({
  kind: 'like',
  pos,
  operand,
  pattern: str(pos, pattern),
  negated: false,
});

export function logical(pos: number, op: 'AND' | 'OR', operands: readonly E.Expr[]): E.Expr {
  return operands.length === 1 ? operands[0] : { kind: 'logical', pos, op, operands };
}

export function call(pos: number, name: string, args: readonly E.Expr[], options: { distinct?: boolean; star?: boolean } = {}): E.Call {
  return { kind: 'call', pos, name, args, distinct: options.distinct ?? false, star: options.star ?? false, orderBy: [] };
}

export const interval = (pos: number, count: number, unit: string): E.Interval => ({
  kind: 'interval',
  pos,
  value: num(pos, String(count)),
  unit: unit.toUpperCase(),
});

export const table = (pos: number, name: string, alias: string): F.TableRef => ({ kind: 'table', pos, name, alias });
export const unnest = (pos: number, expr: E.Expr, alias: string): F.UnnestRef => ({ kind: 'unnest', pos, expr, alias });
export function join(pos: number, type: F.JoinType, left: F.FromItem, right: F.FromItem, on?: E.Expr): F.Join {
  return { kind: 'join', pos, type, left, right, using: [], ...(on && { on }) };
}

export function select(pos: number, parts: Partial<Omit<Q.Select, 'kind' | 'pos'>> & Pick<Q.Select, 'items'>): Q.Select {
  return { kind: 'select', pos, distinct: false, groupBy: [], ...parts };
}

export function query(pos: number, body: Q.QueryBody, parts: Partial<Pick<Q.Query, 'orderBy' | 'limit'>> = {}): Q.Query {
  return { kind: 'query', pos, ctes: [], body, orderBy: parts.orderBy ?? [], ...(parts.limit && { limit: parts.limit }) };
}

export const item = (pos: number, expr: E.Expr, alias?: string): Q.SelectExpr => ({
  kind: 'selectExpr',
  pos,
  expr,
  ...(alias !== undefined && { alias }),
});
export const order = (pos: number, expr: E.Expr, desc: boolean): Q.OrderItem => ({ kind: 'orderItem', pos, expr, desc });

/** `EXISTS (SELECT 1 FROM from WHERE where)`. */
export function exists(pos: number, from: F.FromItem, where: E.Expr): E.Exists {
  return { kind: 'exists', pos, query: query(pos, select(pos, { items: [item(pos, num(pos, '1'))], from, where })) };
}
