/**
 * A rewrite for speed: `count(x)` of a column that is never NULL is `count(*)`.
 *
 * Why: Studio's reports count `t.id` (`count(t.id) as count`, test/compat/studio/queries.json).
 * `id` is in no index, so counting it makes Postgres visit every row in the heap even when every
 * other value the query reads is a hot column INCLUDEd in the `(project, timestamp)` covering
 * index (src/storage/coveringIndexes.ts): the index-only scan the hot leaves exist for never
 * happens. Postgres 15 does not make this rewrite itself.
 *
 * Same rows: `count(x)` counts the rows where x is not NULL, all of them when x cannot be NULL;
 * FILTER and OVER keep their meaning, DISTINCT is left alone. A column cannot be NULL when it
 * is, through any chain of CTEs and derived tables that select it under its name, the `id` or
 * `timestamp` of a source's log table (the only tables the translator names with a schema:
 * resolve/from.ts; storage/logTables.ts declares both NOT NULL), and no outer join on the way
 * can give NULLs in its place (the nullable side of a LEFT, RIGHT or FULL join). Anything else
 * (a set operation, a CTE name defined twice, an expression) is left as it is. A count inside a
 * subquery is rewritten with its own FROM only: a count of an outer query's column belongs to
 * that outer query in Postgres, not to the subquery it is written in.
 */
import { pg, type PgExpr, type PgFrom, type PgFunc, type PgQuery, type PgSelect } from './ast.js';
import { forEachNode, mapNodes, type TreeNode } from '../walk.js';

/** Columns of every log table that are NOT NULL (storage/logTables.ts createLogTable). */
const NOT_NULL_LOG_COLUMNS: ReadonlySet<string> = new Set(['id', 'timestamp']);
/** Chains of CTEs and derived tables followed at most this deep (a guard; translations nest a few). */
const MAX_DEPTH = 16;

/** `query` with `count(x)` of never-NULL columns as `count(*)`. */
export function countRowsOfNotNullColumns(query: PgQuery): PgQuery {
  // CTEs by name; a name defined more than once (nested WITHs) is not followed.
  const ctes = new Map<string, PgQuery | null>();
  let counts = false;
  forEachNode(query, (n) => {
    if (n.kind === 'query')
      for (const c of (n as unknown as PgQuery).ctes) ctes.set(c.name, ctes.has(c.name) && ctes.get(c.name) !== c.query ? null : c.query);
    if (n.kind === 'func' && isCountOfColumn(n as unknown as PgFunc)) counts = true;
  });
  if (!counts) return query;
  const facts = new NotNull(ctes);
  return mapNodes(query, (n) => {
    if (n.kind !== 'query') return n;
    const q = n as unknown as PgQuery;
    if (q.body.kind !== 'select' || !q.body.from) return q;
    const select = q.body;
    const from = select.from!;
    // One walk over the three: a node they share (a target ORDER BY repeats) stays one node.
    const [targets, having, orderBy] = rewriteCounts([select.targets, select.having, q.orderBy] as const, from, facts);
    if (targets === select.targets && having === select.having && orderBy === q.orderBy) return q;
    const body: PgSelect = { ...select, targets, ...(having && { having }) };
    return { ...q, body, orderBy };
  });
}

function isCountOfColumn(fn: PgFunc): boolean {
  return fn.name === 'count' && !fn.star && !fn.distinct && fn.args.length === 1 && fn.args[0].kind === 'column';
}

/** The counts of `tree` (not inside its subqueries) whose column is never NULL in `from`, as `count(*)`. */
function rewriteCounts<T>(tree: T, from: PgFrom, facts: NotNull): T {
  return mapNodes(
    tree,
    (n) => {
      if (n.kind !== 'func' || !isCountOfColumn(n as unknown as PgFunc)) return n;
      const fn = n as unknown as PgFunc;
      const column = fn.args[0] as Extract<PgExpr, { kind: 'column' }>;
      if (!facts.column(from, column, 0)) return n;
      const { args: _args, ...rest } = fn;
      return pg.func('count', [], { ...rest, star: true });
    },
    // A subquery has a FROM of its own: its counts were rewritten when its query was.
    (n: TreeNode) => (n.kind === 'subquery' ? n : undefined),
  );
}

class NotNull {
  constructor(private readonly ctes: ReadonlyMap<string, PgQuery | null>) {}

  /** Whether `alias.name` read in a SELECT with FROM `from` is never NULL. */
  column(from: PgFrom, column: { table?: string; name: string }, depth: number): boolean {
    if (column.table === undefined || depth > MAX_DEPTH) return false;
    const item = find(from, column.table, false);
    if (!item || item.nullable) return false;
    const { found } = item;
    if (found.kind === 'table') {
      if (found.schema !== undefined) return NOT_NULL_LOG_COLUMNS.has(column.name);
      const cte = this.ctes.get(found.name);
      return cte ? this.output(cte, column.name, depth + 1) : false;
    }
    if (found.kind === 'derived') return this.output(found.query, column.name, depth + 1);
    return false; // an UNNEST's element may be NULL
  }

  /** Whether the output column `name` of `query` is never NULL. */
  private output(query: PgQuery, name: string, depth: number): boolean {
    if (query.body.kind === 'query') return this.output(query.body, name, depth + 1);
    if (query.body.kind !== 'select' || !query.body.from) return false;
    const targets = query.body.targets.filter((t) => t.name === name);
    if (targets.length !== 1 || targets[0].expr.kind !== 'column') return false;
    return this.column(query.body.from, targets[0].expr, depth);
  }
}

/** The FROM item `alias` of a FROM clause, and whether an outer join may give NULLs in place of its rows. */
function find(item: PgFrom, alias: string, nullable: boolean): { found: PgFrom; nullable: boolean } | undefined {
  if (item.kind === 'join')
    return (
      find(item.left, alias, nullable || item.type === 'RIGHT' || item.type === 'FULL') ??
      find(item.right, alias, nullable || item.type === 'LEFT' || item.type === 'FULL')
    );
  return item.alias === alias ? { found: item, nullable } : undefined;
}
