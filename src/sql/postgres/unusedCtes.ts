/**
 * A rewrite for speed: top-level CTEs that nothing reads are left out, and the `$n` parameters
 * are renumbered so that only those still used remain.
 *
 * Why: a sandboxed query over `logs.all` carries all the endpoint's CTEs but usually reads one.
 * Postgres never runs an unread CTE, but it still parses and analyses it (opening its
 * partitioned table) on every run, because queries are sent as unnamed statements so that the
 * planner sees the parameter values: 0.2–0.3 ms of a 1–4 ms query (BENCHMARKS.md). The printed
 * SQL is also shorter to validate (libpg-query) once per translation.
 *
 * Parameters must be renumbered: Postgres rejects a statement in which some `$n` below the
 * highest one appears nowhere (it cannot infer that parameter's type).
 */
import type { PgQuery } from './ast.js';
import { forEachNode, type TreeNode } from '../walk.js';

/**
 * `query` without the top-level CTEs it does not read; `$n` unchanged. Run first as well as last
 * (src/sql/passes.ts): the rewrites in between then see only what is read, which for a
 * sandboxed query over `logs.all` is one CTE of fifteen.
 */
export function pruneUnreadCtes(query: PgQuery): PgQuery {
  if (!query.ctes.length) return query;
  const byName = new Map(query.ctes.map((c) => [c.name, c] as const));
  const used = new Set<string>();
  // A worklist, not a recursive visit per CTE read: a chain of CTEs would take a stack frame per link.
  const pending: unknown[] = [{ ...query, ctes: [] }];
  while (pending.length) {
    forEachNode(pending.pop(), (n) => {
      // A CTE name of a nested WITH that shadows a top-level one keeps the top-level one: safe.
      if (n.kind === 'table' && n.schema === undefined && typeof n.name === 'string' && byName.has(n.name) && !used.has(n.name)) {
        used.add(n.name);
        pending.push(byName.get(n.name)!.query);
      }
    });
  }
  return used.size === query.ctes.length ? query : { ...query, ctes: query.ctes.filter((c) => used.has(c.name)) };
}

/** `query` without the top-level CTEs it does not read, and the parameter names of what is left. */
export function dropUnusedCtes(query: PgQuery, parameters: readonly string[]): { query: PgQuery; parameters: string[] } {
  const pruned = pruneUnreadCtes(query);
  if (!parameters.length) return { query: pruned, parameters: [] };
  // Always counted: CTEs left out by the first run of this pass (src/sql/passes.ts) read parameters too.
  const seen = new Set<number>();
  forEachNode(pruned, (n) => {
    if (n.kind === 'param') seen.add(n.index as number);
  });
  const kept = [...seen].sort((a, b) => a - b);
  if (kept.length === parameters.length) return { query: pruned, parameters: [...parameters] };
  const renumber = new Map(kept.map((old, i) => [old, i + 1]));
  return { query: renumberParams(pruned, renumber), parameters: kept.map((old) => parameters[old - 1]) };
}

type Node = TreeNode;

/** A copy with `$n` renumbered; a shared subtree is copied once and stays shared. */
function renumberParams<T>(node: T, renumber: ReadonlyMap<number, number>, copies = new Map<object, unknown>()): T {
  if (node === null || typeof node !== 'object') return node;
  const done = copies.get(node);
  if (done !== undefined) return done as T;
  let out: unknown;
  if (Array.isArray(node)) {
    out = node.map((item: unknown) => renumberParams(item, renumber, copies));
  } else {
    const n = node as Node;
    if (n.kind === 'param') {
      out = { ...n, index: renumber.get(n.index as number)! };
    } else {
      const copy: Node = {};
      for (const [key, value] of Object.entries(n)) copy[key] = renumberParams(value, renumber, copies);
      out = copy;
    }
  }
  copies.set(node, out);
  return out as T;
}
