/**
 * The table names a query writes, from its parse tree alone (no resolution): every `FROM x`
 * and `JOIN x` at any depth, and the names of every CTE it defines at any depth. What the
 * endpoints layer uses to find which endpoints may read a source or another endpoint.
 *
 *   queryTables('with a as (select * from `x.y`) select * from a join b using (id)')
 *   // → { tables: ['x.y', 'a', 'b'], ctes: ['a'] }   (CTE names lower-cased)
 */
import { parseQuery } from './parser.js';

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
  walk(parseQuery(query), tables, ctes);
  return { tables: [...tables], ctes: [...ctes] };
}

/** A generic walk over the syntax tree's nodes (objects tagged by `kind`), so new node kinds need no change here. */
function walk(node: unknown, tables: Set<string>, ctes: Set<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, tables, ctes);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const n = node as { kind?: unknown; name?: unknown };
  if (n.kind === 'table' && typeof n.name === 'string') tables.add(n.name);
  if (n.kind === 'cte' && typeof n.name === 'string') ctes.add(n.name.toLowerCase());
  for (const value of Object.values(node)) if (typeof value === 'object' && value !== null) walk(value, tables, ctes);
}
