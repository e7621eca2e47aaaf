/** FROM clause nodes. Joins are a left-deep tree (a parenthesised join may be either operand), with the comma join as its own type. */
import type { Expr } from './expressions.js';
import type { NodeBase } from './node.js';
import type { Query } from './queries.js';

export type FromItem = TableRef | UnnestRef | DerivedRef | Join;
export type FromKind = FromItem['kind'];

/** A source (`cloudflare.logs.prod`) or a CTE; `name` is the dotted name as written. */
export interface TableRef extends NodeBase<'table'> {
  readonly name: string;
  readonly alias?: string;
}
export interface UnnestRef extends NodeBase<'unnest'> {
  readonly expr: Expr;
  readonly alias?: string;
  /** `WITH OFFSET [AS name]`: the name of the position column. */
  readonly offset?: string;
}
export interface DerivedRef extends NodeBase<'derived'> {
  readonly query: Query;
  readonly alias?: string;
}

export type JoinType = 'COMMA' | 'CROSS' | 'INNER' | 'LEFT' | 'RIGHT' | 'FULL';
export interface Join extends NodeBase<'join'> {
  readonly type: JoinType;
  readonly left: FromItem;
  readonly right: FromItem;
  readonly on?: Expr;
  readonly using: readonly string[];
}
