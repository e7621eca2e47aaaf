/**
 * A generic walk over a syntax tree (the BigQuery AST or the Postgres one: plain objects tagged
 * by `kind`, and arrays), so a new node kind needs no change in the passes that only look for
 * a few kinds (tables read, CTEs defined, parameters).
 */
export type TreeNode = Record<string, unknown>;

/**
 * Calls `f` once on every node object of the tree. Subtrees may be shared (a select alias used
 * in HAVING and ORDER BY is the same node), so a node already visited is skipped: 2,000 uses of
 * one large alias would otherwise walk it 2,000 times.
 */
export function forEachNode(node: unknown, f: (n: TreeNode) => void, visited = new Set<object>()): void {
  if (node === null || typeof node !== 'object' || visited.has(node)) return;
  visited.add(node);
  if (Array.isArray(node)) {
    for (const item of node) forEachNode(item, f, visited);
  } else {
    f(node as TreeNode);
    for (const value of Object.values(node)) forEachNode(value, f, visited);
  }
}
