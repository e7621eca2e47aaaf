/**
 * The table names a query writes, from its parse tree alone (no resolution): every `FROM x`
 * and `JOIN x` at any depth, and the names of every CTE it defines at any depth. What the
 * endpoints layer uses to find which endpoints may read a source or another endpoint.
 *
 *   queryTables('with a as (select * from `x.y`) select * from a join b using (id)')
 *   // → { tables: ['x.y', 'a', 'b'], ctes: ['a'] }   (CTE names lower-cased)
 */
import { parseQuery } from './parser.js';
import { forEachNode } from './walk.js';

export interface QueryTables {
  /** Table names as written, in first-use order, without repeats. */
  readonly tables: readonly string[];
  /** CTE names defined anywhere in the query, lower-cased (CTE names are case-insensitive). */
  readonly ctes: readonly string[];
}

/** Throws SqlError when the query does not parse. */
export function queryTables(query: string): QueryTables {
  const tables = new Set<string>();
  const ctes = new Set<string>();
  forEachNode(parseQuery(query), (n) => {
    if (n.kind === 'table' && typeof n.name === 'string') tables.add(n.name);
    if (n.kind === 'cte' && typeof n.name === 'string') ctes.add(n.name.toLowerCase());
  });
  return { tables: [...tables], ctes: [...ctes] };
}
