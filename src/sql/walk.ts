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
    for (const item of node) if (item !== null && typeof item === 'object') forEachNode(item, f, visited);
  } else {
    f(node as TreeNode);
    // perf: for…in and the type test before the call, not Object.values: no array per node, no call per leaf value.
    for (const key in node) {
      const value = (node as TreeNode)[key];
      if (value !== null && typeof value === 'object') forEachNode(value, f, visited);
    }
  }
}

/**
 * A copy of the tree with `f` applied to every node object, children first: `f` gets the node
 * with its children already mapped and returns it or its replacement (which is not walked again).
 * `before`, when it returns something, replaces a node before its children are walked (a pass
 * that gives nested queries a scope of their own maps them itself). Unchanged subtrees are kept,
 * not copied; a shared subtree is mapped once and stays shared.
 */
export function mapNodes<T>(root: T, f: (n: TreeNode) => unknown, before?: (n: TreeNode) => unknown): T {
  const done = new Map<object, unknown>();
  const visit = (node: unknown): unknown => {
    if (node === null || typeof node !== 'object') return node;
    const mapped = done.get(node);
    if (mapped !== undefined) return mapped;
    let out: unknown;
    if (Array.isArray(node)) {
      let changed = false;
      const items = node.map((item) => {
        const m = visit(item);
        changed ||= m !== item;
        return m;
      });
      out = changed ? items : node;
    } else {
      const n = node as TreeNode;
      const replaced = before?.(n);
      if (replaced !== undefined) {
        done.set(node, replaced);
        return replaced;
      }
      let copy: TreeNode | undefined;
      for (const key in n) {
        const value = n[key];
        if (value === null || typeof value !== 'object') continue;
        const m = visit(value);
        if (m !== value) (copy ??= { ...n })[key] = m;
      }
      out = f(copy ?? n);
    }
    done.set(node, out);
    return out;
  };
  return visit(root) as T;
}
