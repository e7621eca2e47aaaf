/**
 * A rewrite for speed: a CTE that is one row of constants (`dates AS (SELECT <expr> AS start)`,
 * no FROM) read through a scalar subquery (`(SELECT start FROM dates)`) is replaced by the
 * expression itself.
 *
 * Why: Postgres runs an uncorrelated scalar subquery as an InitPlan whose value the planner
 * cannot see. `timestamp >= (SELECT start FROM dates)` was estimated at a third of the table,
 * so an hour's window got parallel index scans over every partition, which were pruned only
 * when the InitPlan had run. Inline, `timestamp >= now() - '1 hour'::interval` is estimated from
 * the statistics and its partitions are pruned at executor start-up (BENCHMARKS.md).
 *
 * Same rows: a FROM-less SELECT without WHERE, GROUP BY, HAVING, DISTINCT, ORDER BY, LIMIT or
 * OFFSET has exactly one row, so the subquery's value is its expression. Only expressions
 * without subqueries or columns, whose calls are all scalar functions of the catalogue, qualify
 * (an aggregate of no FROM counts one row, not the reader's rows; a name the catalogue does not
 * know might be one); the catalogue has no volatile function (test/sql/pg-functions.test.ts; now()
 * is the same within a statement), so evaluating the expression once per use is the same as
 * evaluating it once.
 */
import type { PgExpr, PgQuery } from './ast.js';
import { some } from './transform.js';
import { isScalarFunction } from './functions.js';
import { mapNodes, type TreeNode } from '../walk.js';

interface ConstantRow {
  readonly names: readonly string[];
  readonly row: readonly PgExpr[];
}

/** By lower-case CTE name, the CTEs in scope that are one row of constants (undefined: a CTE that is not, shadowing an outer one). */
type Constants = ReadonlyMap<string, ConstantRow | undefined>;

/**
 * `query` with every scalar subquery that reads a constant CTE in scope replaced by the
 * expression. A CTE is in scope in the CTEs after it and in the body of its query, nested
 * queries included, unless a nested WITH defines the name again (BigQuery's scoping, as the
 * resolver's). A CTE whose own subqueries were inlined may become constant in turn.
 */
export function inlineConstantCtes(query: PgQuery): PgQuery {
  return inlineIn(query, new Map());
}

function inlineIn(query: PgQuery, outer: Constants): PgQuery {
  let constants = outer;
  let ctes = query.ctes;
  if (ctes.length) {
    const visible = new Map(outer);
    ctes = ctes.map((cte) => {
      const inlined = inlineIn(cte.query, visible);
      const row = constantRow(inlined);
      const names = inlined.body.kind === 'select' ? inlined.body.targets.map((t) => t.name) : [];
      visible.set(cte.name.toLowerCase(), row && { names, row });
      return inlined === cte.query ? cte : { ...cte, query: inlined };
    });
    constants = visible;
  }
  let changed = ctes !== query.ctes;
  const rest: TreeNode = {};
  for (const key in query) {
    if (key === 'ctes') continue;
    const value = (query as unknown as TreeNode)[key];
    const mapped = inlineBelow(value, constants);
    changed ||= mapped !== value;
    rest[key] = mapped;
  }
  return changed ? ({ ...rest, ctes } as unknown as PgQuery) : query;
}

/** The nodes below a query with its constants in scope: nested queries get their own scope. */
function inlineBelow<T>(node: T, constants: Constants): T {
  return mapNodes(
    node,
    (n) => {
      if (n.kind !== 'subquery' || n.exists || !constants.size) return n;
      return readOfConstantCte(n.query as PgQuery, (name) => constants.get(name.toLowerCase())) ?? n;
    },
    (n) => (n.kind === 'query' ? inlineIn(n as unknown as PgQuery, constants) : undefined),
  );
}

const notConstant = (e: PgExpr): boolean =>
  e.kind === 'column' ||
  e.kind === 'subquery' ||
  (e.kind === 'in' && e.query !== undefined) ||
  (e.kind === 'func' &&
    (!isScalarFunction(e.name) || !!e.star || !!e.distinct || !!e.filter || !!e.orderBy || !!e.withinGroup || !!e.over));

/** The expressions of a CTE's single row of constants, in column order; undefined for any other CTE. */
export function constantRow(query: PgQuery): readonly PgExpr[] | undefined {
  const s = query.body;
  if (query.ctes.length || query.orderBy.length || query.limit || query.offset) return undefined;
  if (s.kind !== 'select' || s.from || s.where || s.groupBy.length || s.having || s.distinct) return undefined;
  const exprs = s.targets.map((t) => t.expr);
  return exprs.some((e) => some(e, notConstant)) ? undefined : exprs;
}

/**
 * The expression a scalar subquery reads when it is `SELECT alias.column FROM cte AS alias` and
 * `rowOf(cte)` knows the CTE's constants; undefined otherwise.
 */
export function readOfConstantCte(
  query: PgQuery,
  rowOf: (cte: string) => { names: readonly string[]; row: readonly PgExpr[] } | undefined,
): PgExpr | undefined {
  const s = query.body;
  if (query.ctes.length || query.orderBy.length || query.limit || query.offset) return undefined;
  if (s.kind !== 'select' || s.where || s.groupBy.length || s.having || s.distinct || s.targets.length !== 1) return undefined;
  const from = s.from;
  const target = s.targets[0].expr;
  if (from?.kind !== 'table' || from.schema !== undefined || target.kind !== 'column' || target.table !== from.alias) return undefined;
  const cte = rowOf(from.name);
  const index = cte ? cte.names.indexOf(target.name) : -1;
  return index < 0 ? undefined : cte!.row[index];
}
