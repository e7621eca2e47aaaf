/** Expression nodes of the BigQuery syntax tree. */
import type { NodeBase } from './node.js';
import type { Query } from './queries.js';

export type Expr =
  | Literal
  | Param
  | Path
  | FieldAccess
  | Subscript
  | Unary
  | Binary
  | Logical
  | IsTest
  | Between
  | Like
  | InList
  | InQuery
  | Case
  | Cast
  | Call
  | Extract
  | Interval
  | ScalarSubquery
  | Exists
  | Struct
  | ArrayLiteral
  | ArraySubquery
  | InUnnest;

export type ExprKind = Expr['kind'];

export type LiteralType = 'STRING' | 'INT64' | 'FLOAT64' | 'BOOL' | 'NULL';
export interface Literal extends NodeBase<'literal'> {
  readonly type: LiteralType;
  /** The literal's value: unescaped text for strings, source text for numbers. */
  readonly value: string | boolean | null;
}

export interface Param extends NodeBase<'param'> {
  readonly name: string;
}

/** A dotted name `a.b.c` (range alias, column, record fields); resolved later by scope. */
export interface Path extends NodeBase<'path'> {
  readonly parts: readonly string[];
}

/** `.name` on an expression that is not a plain name, e.g. `arr[OFFSET(0)].path`. */
export interface FieldAccess extends NodeBase<'field'> {
  readonly base: Expr;
  readonly name: string;
}

export type SubscriptMode = 'OFFSET' | 'SAFE_OFFSET' | 'ORDINAL' | 'SAFE_ORDINAL';
/** `x[OFFSET(n)]`; a bare `x[n]` is OFFSET, as in BigQuery. */
export interface Subscript extends NodeBase<'subscript'> {
  readonly base: Expr;
  readonly index: Expr;
  readonly mode: SubscriptMode;
}

export interface Unary extends NodeBase<'unary'> {
  readonly op: '-' | '+' | 'NOT';
  readonly operand: Expr;
}

export type BinaryOp = '+' | '-' | '*' | '/' | '||' | '=' | '!=' | '<' | '<=' | '>' | '>=';
export interface Binary extends NodeBase<'binary'> {
  readonly op: BinaryOp;
  readonly left: Expr;
  readonly right: Expr;
}

/** AND / OR chains are n-ary, so a long `a OR b OR …` list is flat rather than deep. */
export interface Logical extends NodeBase<'logical'> {
  readonly op: 'AND' | 'OR';
  readonly operands: readonly Expr[];
}

export interface IsTest extends NodeBase<'is'> {
  readonly operand: Expr;
  readonly test: 'NULL' | 'TRUE' | 'FALSE';
  readonly negated: boolean;
}
export interface Between extends NodeBase<'between'> {
  readonly operand: Expr;
  readonly low: Expr;
  readonly high: Expr;
  readonly negated: boolean;
}
export interface Like extends NodeBase<'like'> {
  readonly operand: Expr;
  readonly pattern: Expr;
  readonly negated: boolean;
}
export interface InList extends NodeBase<'inList'> {
  readonly operand: Expr;
  readonly list: readonly Expr[];
  readonly negated: boolean;
}
export interface InQuery extends NodeBase<'inQuery'> {
  readonly operand: Expr;
  readonly query: Query;
  readonly negated: boolean;
}

export interface When {
  readonly when: Expr;
  readonly then: Expr;
}
/** Both forms: `CASE x WHEN v THEN …` (operand set) and `CASE WHEN cond THEN …`. */
export interface Case extends NodeBase<'case'> {
  readonly operand?: Expr;
  readonly whens: readonly When[];
  readonly otherwise?: Expr;
}

export type CastType =
  | 'INT64'
  | 'FLOAT64'
  | 'NUMERIC'
  | 'BOOL'
  | 'STRING'
  | 'BYTES'
  | 'TIMESTAMP'
  | 'DATETIME'
  | 'DATE'
  | 'TIME'
  | 'RANGE<DATE>'
  | 'RANGE<DATETIME>'
  | 'RANGE<TIMESTAMP>';
/** CAST / SAFE_CAST, and typed literals (`TIMESTAMP '2026-01-01'`). */
export interface Cast extends NodeBase<'cast'> {
  readonly operand: Expr;
  readonly type: CastType;
  readonly safe: boolean;
}

export interface CallOrder {
  readonly expr: Expr;
  readonly desc: boolean;
}
/**
 * A function call; `name` is lower case, dotted for `NET.HOST` (`net.host`). Aggregate modifiers
 * are kept for the function table to judge.
 */
export interface Call extends NodeBase<'call'> {
  readonly name: string;
  readonly args: readonly Expr[];
  /** `SAFE.f(…)`: NULL where `f` would raise an error. */
  readonly safe?: boolean;
  /** The name of each argument given as `name => value`, in `args`' order (undefined for positional ones). */
  readonly argNames?: readonly (string | undefined)[];
  /** Arguments that may only be given by name (`create_if_missing => FALSE` after a variable number of others), by name. */
  readonly named?: Readonly<Record<string, Expr>>;
  readonly distinct: boolean;
  /** `COUNT(*)` */
  readonly star: boolean;
  readonly orderBy: readonly CallOrder[];
  readonly limit?: Expr;
  /** `IGNORE NULLS` / `RESPECT NULLS` after the arguments; the function table says who takes it. */
  readonly nulls?: 'IGNORE' | 'RESPECT';
  /** `OVER (…)`: the call is a window function. */
  readonly over?: WindowSpec;
}

export interface WindowOrder {
  readonly expr: Expr;
  readonly desc: boolean;
  readonly nulls?: 'FIRST' | 'LAST';
}
export type FrameBoundKind = 'UNBOUNDED PRECEDING' | 'PRECEDING' | 'CURRENT ROW' | 'FOLLOWING' | 'UNBOUNDED FOLLOWING';
export interface FrameBound {
  readonly kind: FrameBoundKind;
  readonly offset?: Expr;
  readonly pos: number;
}
/** `OVER (PARTITION BY … ORDER BY … ROWS|RANGE BETWEEN … AND …)`. */
export interface WindowSpec {
  readonly pos: number;
  readonly partitionBy: readonly Expr[];
  readonly orderBy: readonly WindowOrder[];
  readonly frame?: { readonly unit: 'ROWS' | 'RANGE'; readonly start: FrameBound; readonly end?: FrameBound };
}

/** A declared type: `INT64`, `STRUCT<x INT64, y STRING>`, `ARRAY<INT64>`. */
export type TypeSpec =
  | { readonly kind: 'scalar'; readonly name: CastType }
  | { readonly kind: 'struct'; readonly fields: readonly { readonly name?: string; readonly type: TypeSpec }[] }
  | { readonly kind: 'array'; readonly element: TypeSpec };

export interface StructField {
  readonly expr: Expr;
  readonly name?: string;
}
/** `STRUCT(a, b AS y)`, `STRUCT<x INT64>(…)` and the tuple `(a, b)`. */
export interface Struct extends NodeBase<'struct'> {
  readonly fields: readonly StructField[];
  readonly types?: readonly { readonly name?: string; readonly type: TypeSpec }[];
}
/** `[1, 2]`, `ARRAY[…]`, `ARRAY<INT64>[…]`. */
export interface ArrayLiteral extends NodeBase<'arrayLiteral'> {
  readonly items: readonly Expr[];
  readonly element?: TypeSpec;
}
/** `ARRAY(SELECT …)`. */
export interface ArraySubquery extends NodeBase<'arraySubquery'> {
  readonly query: Query;
}
/** `x [NOT] IN UNNEST(array)`. */
export interface InUnnest extends NodeBase<'inUnnest'> {
  readonly operand: Expr;
  readonly array: Expr;
  readonly negated: boolean;
}

export interface Extract extends NodeBase<'extract'> {
  readonly part: string;
  readonly operand: Expr;
  /** `EXTRACT(part FROM ts AT TIME ZONE zone)` */
  readonly zone?: Expr;
}
export interface Interval extends NodeBase<'interval'> {
  readonly value: Expr;
  readonly unit: string;
  /** `INTERVAL '1-2' YEAR TO MONTH`: the last unit of a range literal. */
  readonly toUnit?: string;
}
export interface ScalarSubquery extends NodeBase<'subquery'> {
  readonly query: Query;
}
export interface Exists extends NodeBase<'exists'> {
  readonly query: Query;
}
