/**
 * The Postgres side: the resolver builds these nodes, only the printer turns them into text.
 * Immutable (readonly), tagged by `kind`; `pg.*` helpers are the factories.
 */

export type PgExpr =
  | PgColumn
  | PgLiteral
  | PgParam
  | PgOp
  | PgNot
  | PgNeg
  | PgAndOr
  | PgIs
  | PgFunc
  | PgCast
  | PgCase
  | PgIn
  | PgBetween
  | PgSubquery
  | PgSubscript
  | PgArray
  | PgExtract
  | PgAny;
export type PgExprKind = PgExpr['kind'];

export interface PgColumn {
  readonly kind: 'column';
  readonly table?: string;
  readonly name: string;
}
export interface PgLiteral {
  readonly kind: 'literal';
  readonly value: string | number | boolean | null;
  /** numeric text kept verbatim */ readonly numeric?: string;
}
export interface PgParam {
  readonly kind: 'param';
  readonly index: number;
}
/** A binary operator: arithmetic, comparison, `->`, `->>`, `#>`, `~`, `LIKE`, … */
export interface PgOp {
  readonly kind: 'op';
  readonly op: string;
  readonly left: PgExpr;
  readonly right: PgExpr;
}
export interface PgNot {
  readonly kind: 'not';
  readonly operand: PgExpr;
}
export interface PgNeg {
  readonly kind: 'neg';
  readonly operand: PgExpr;
}
export interface PgAndOr {
  readonly kind: 'andOr';
  readonly op: 'AND' | 'OR';
  readonly operands: readonly PgExpr[];
}
export interface PgIs {
  readonly kind: 'is';
  readonly operand: PgExpr;
  readonly test: 'NULL' | 'TRUE' | 'FALSE';
  readonly negated: boolean;
}
export interface PgOrder {
  readonly expr: PgExpr;
  readonly desc: boolean;
  readonly nulls?: 'FIRST' | 'LAST';
}
export interface PgFunc {
  readonly kind: 'func';
  readonly name: string;
  readonly args: readonly PgExpr[];
  readonly distinct?: boolean;
  readonly star?: boolean;
  readonly filter?: PgExpr;
  readonly orderBy?: readonly PgOrder[];
  /** ordered-set aggregates: `percentile_disc(…) WITHIN GROUP (ORDER BY …)` */
  readonly withinGroup?: readonly PgOrder[];
  /** a window function: `f(…) OVER (…)` */
  readonly over?: PgWindow;
}
export interface PgFrameBound {
  readonly kind: 'UNBOUNDED PRECEDING' | 'PRECEDING' | 'CURRENT ROW' | 'FOLLOWING' | 'UNBOUNDED FOLLOWING';
  readonly offset?: PgExpr;
}
export interface PgWindow {
  readonly partitionBy: readonly PgExpr[];
  readonly orderBy: readonly PgOrder[];
  readonly frame?: { readonly unit: 'ROWS' | 'RANGE'; readonly start: PgFrameBound; readonly end: PgFrameBound };
}
export interface PgCast {
  readonly kind: 'cast';
  readonly operand: PgExpr;
  readonly type: PgTypeName;
}
export interface PgCase {
  readonly kind: 'case';
  readonly operand?: PgExpr;
  readonly whens: readonly { when: PgExpr; then: PgExpr }[];
  readonly otherwise?: PgExpr;
}
export interface PgIn {
  readonly kind: 'in';
  readonly operand: PgExpr;
  readonly list?: readonly PgExpr[];
  readonly query?: PgQuery;
  readonly negated: boolean;
}
export interface PgBetween {
  readonly kind: 'between';
  readonly operand: PgExpr;
  readonly low: PgExpr;
  readonly high: PgExpr;
  readonly negated: boolean;
}
export interface PgSubquery {
  readonly kind: 'subquery';
  readonly query: PgQuery;
  readonly exists?: boolean;
}
/** `(base)[index]` on a Postgres array (1-based); with `upper`, the slice `(base)[index:upper]`. */
export interface PgSubscript {
  readonly kind: 'subscript';
  readonly base: PgExpr;
  readonly index: PgExpr;
  readonly upper?: PgExpr;
}
/** `(operand = ANY (array))` over a Postgres array; negated: `(NOT (operand = ANY (array)))`. */
export interface PgAny {
  readonly kind: 'any';
  readonly operand: PgExpr;
  readonly array: PgExpr;
  readonly negated: boolean;
}
export interface PgArray {
  readonly kind: 'array';
  readonly items: readonly PgExpr[];
}
export interface PgExtract {
  readonly kind: 'extract';
  readonly field: string;
  readonly operand: PgExpr;
}

/** The only type names the printer emits; validate.ts allows exactly these. */
export type PgTypeName =
  | 'text'
  | 'bytea'
  | 'integer'
  | 'bigint'
  | 'float8'
  | 'numeric'
  | 'boolean'
  | 'timestamptz'
  | 'timestamp'
  | 'date'
  | 'time'
  | 'interval'
  | 'jsonb'
  | 'daterange'
  | 'tsrange'
  | 'tstzrange';

// ── queries and FROM ───────────────────────────────────────────────────────

export interface PgQuery {
  readonly kind: 'query';
  readonly ctes: readonly { readonly name: string; readonly query: PgQuery }[];
  readonly body: PgSelect | PgSetOp | PgQuery;
  readonly orderBy: readonly PgOrder[];
  readonly limit?: PgExpr;
  readonly offset?: PgExpr;
}
export interface PgSelect {
  readonly kind: 'select';
  readonly distinct: boolean;
  readonly targets: readonly { readonly expr: PgExpr; readonly name: string }[];
  readonly from?: PgFrom;
  readonly where?: PgExpr;
  readonly groupBy: readonly PgExpr[];
  readonly having?: PgExpr;
}
export interface PgSetOp {
  readonly kind: 'setOp';
  readonly op: 'UNION ALL' | 'UNION';
  readonly left: PgQuery['body'];
  readonly right: PgQuery['body'];
}

export type PgFrom = PgTable | PgDerived | PgFunctionFrom | PgJoin;
export type PgFromKind = PgFrom['kind'];
export interface PgTable {
  readonly kind: 'table';
  readonly schema?: string;
  readonly name: string;
  readonly alias: string;
}
export interface PgDerived {
  readonly kind: 'derived';
  readonly query: PgQuery;
  readonly alias: string;
}
/** `LATERAL jsonb_array_elements(arg) AS alias(value)`: the only set-returning function allowed. */
export interface PgFunctionFrom {
  readonly kind: 'function';
  readonly fn: 'jsonb_array_elements' | 'jsonb_array_elements_text';
  readonly arg: PgExpr;
  readonly alias: string;
  readonly column: string;
  /** `WITH ORDINALITY AS alias(column, ordinality)`: the 1-based position column (UNNEST … WITH OFFSET). */
  readonly ordinality?: string;
  /**
   * Set by the resolver when the array always held exactly one record (the source schema's
   * `single`): the expression of that record, `array->0`, and its `IS NOT NULL` guard (which may
   * test a hot column first: resolve/hot.ts). The pass of postgres/singleRecord.ts then reads it
   * by path instead of joining; the printer ignores it.
   */
  readonly single?: { readonly value: PgExpr; readonly guard: PgExpr };
}
export interface PgJoin {
  readonly kind: 'join';
  readonly type: 'CROSS' | 'INNER' | 'LEFT' | 'RIGHT' | 'FULL';
  readonly left: PgFrom;
  readonly right: PgFrom;
  readonly on?: PgExpr;
  readonly using?: readonly string[];
}

// ── factories ──────────────────────────────────────────────────────────────

/** Not Object.freeze'd: the types are readonly, and freezing doubled translation time (see ast/node.ts). */
const f = <T>(node: T): T => node;
export const pg = {
  column: (table: string | undefined, name: string): PgColumn => f({ kind: 'column', table, name }),
  literal: (value: PgLiteral['value']): PgLiteral => f({ kind: 'literal', value }),
  number: (text: string): PgLiteral => f({ kind: 'literal', value: Number(text), numeric: text }),
  param: (index: number): PgParam => f({ kind: 'param', index }),
  op: (op: string, left: PgExpr, right: PgExpr): PgOp => f({ kind: 'op', op, left, right }),
  not: (operand: PgExpr): PgNot => f({ kind: 'not', operand }),
  neg: (operand: PgExpr): PgNeg => f({ kind: 'neg', operand }),
  and: (...operands: PgExpr[]): PgExpr => (operands.length === 1 ? operands[0] : f({ kind: 'andOr', op: 'AND', operands })),
  or: (...operands: PgExpr[]): PgExpr => (operands.length === 1 ? operands[0] : f({ kind: 'andOr', op: 'OR', operands })),
  is: (operand: PgExpr, test: PgIs['test'], negated = false): PgIs => f({ kind: 'is', operand, test, negated }),
  func: (name: string, args: PgExpr[], extra: Partial<Omit<PgFunc, 'kind' | 'name' | 'args'>> = {}): PgFunc =>
    f({ kind: 'func', name, args, ...extra }),
  cast: (operand: PgExpr, type: PgTypeName): PgCast => f({ kind: 'cast', operand, type }),
  case: (whens: { when: PgExpr; then: PgExpr }[], otherwise?: PgExpr, operand?: PgExpr): PgCase =>
    f({ kind: 'case', operand, whens, otherwise }),
  subquery: (query: PgQuery, exists = false): PgSubquery => f({ kind: 'subquery', query, exists }),
  /** `SELECT <one column> FROM <from>`, without WITH, WHERE, GROUP BY or ORDER BY: the queries the resolver builds itself. */
  selectOne: (expr: PgExpr, name: string, from: PgFrom, rest: Pick<PgQuery, 'limit' | 'offset'> = {}): PgQuery =>
    f({
      kind: 'query',
      ctes: [],
      orderBy: [],
      ...rest,
      body: { kind: 'select', distinct: false, targets: [{ expr, name }], from, groupBy: [] },
    }),
  subscript: (base: PgExpr, index: PgExpr): PgSubscript => f({ kind: 'subscript', base, index }),
  slice: (base: PgExpr, lower: PgExpr, upper: PgExpr): PgSubscript => f({ kind: 'subscript', base, index: lower, upper }),
  array: (items: PgExpr[]): PgArray => f({ kind: 'array', items }),
  extract: (field: string, operand: PgExpr): PgExtract => f({ kind: 'extract', field, operand }),
  /** `timezone('UTC', x)`, i.e. `x AT TIME ZONE 'UTC'`: timestamptz → UTC wall clock and back, whatever the session TimeZone. */
  atUtc: (operand: PgExpr): PgFunc => f({ kind: 'func', name: 'timezone', args: [f({ kind: 'literal', value: 'UTC' }), operand] }),
  /** `timezone(zone, x)`: the wall clock in `zone`, or a wall clock in `zone` as a timestamptz. */
  atZone: (zone: PgExpr, operand: PgExpr): PgFunc => f({ kind: 'func', name: 'timezone', args: [zone, operand] }),
};
