/** Query-level nodes: WITH, SELECT, set operations, ordering. */
import type { Expr } from './expressions.js';
import type { FromItem } from './from.js';
import type { NodeBase } from './node.js';

/** A full query expression: optional WITH, a body, then ORDER BY / LIMIT applying to the body. */
export interface Query extends NodeBase<'query'> {
  readonly ctes: readonly Cte[];
  readonly body: QueryBody;
  readonly orderBy: readonly OrderItem[];
  readonly limit?: Expr;
  readonly offset?: Expr;
}

export type QueryBody = Select | SetOperation | Query;
export type QueryBodyKind = QueryBody['kind'];

export interface Cte extends NodeBase<'cte'> {
  readonly name: string;
  readonly query: Query;
}

export interface Select extends NodeBase<'select'> {
  readonly distinct: boolean;
  readonly items: readonly SelectItem[];
  readonly from?: FromItem;
  readonly where?: Expr;
  readonly groupBy: readonly Expr[];
  readonly having?: Expr;
  /** `QUALIFY cond`: filters on window results, after HAVING and before DISTINCT. */
  readonly qualify?: Expr;
}

export interface SetOperation extends NodeBase<'setOp'> {
  readonly op: 'UNION ALL' | 'UNION DISTINCT';
  readonly left: QueryBody;
  readonly right: QueryBody;
}

export type SelectItem = SelectExpr | SelectStar;
export interface SelectExpr extends NodeBase<'selectExpr'> {
  readonly expr: Expr;
  readonly alias?: string;
}
/** `*` or `alias.*`, with BigQuery's `EXCEPT (a, b)`. */
export interface SelectStar extends NodeBase<'selectStar'> {
  readonly qualifier?: readonly string[];
  readonly except: readonly string[];
}

export interface OrderItem extends NodeBase<'orderItem'> {
  readonly expr: Expr;
  readonly desc: boolean;
  readonly nulls?: 'FIRST' | 'LAST';
}
