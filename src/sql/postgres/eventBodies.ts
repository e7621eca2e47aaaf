/**
 * A rewrite for speed: the hidden `body` columns that CTEs and derived tables of event rows pass
 * on (src/sql/resolve/events.ts) are removed when no query reads one.
 *
 * Why: a CTE read more than once is materialised with every column it selects, so an unread
 * `body` (the whole event, ~1.6 KB for an edge log) would be copied for every row; a CTE read
 * once is inlined and Postgres drops the unread column itself. Studio's queries over `logs.all`
 * read no unknown names, so they keep the SQL they had. When a reader does read one, every
 * hidden `body` stays: a chain of CTEs passes it from one to the next, and that is the rare case.
 */
import { forEachNode, mapNodes, type TreeNode } from '../walk.js';
import type { PgQuery, PgSelect } from './ast.js';

/** The hidden output column holding an event's `body` (quoted when printed, so it cannot clash with a BigQuery name). */
export const EVENT_BODY_COLUMN = 'event.body';

type Targets = PgSelect['targets'];

const isHidden = (t: Targets[number]): boolean => t.name === EVENT_BODY_COLUMN;

export function dropUnreadEventBodies(query: PgQuery): PgQuery {
  // The hidden targets' own expressions pass a body on; any other reference to one reads it.
  const passing = new Set<object>();
  const references: object[] = [];
  forEachNode(query, (n) => {
    if (n.kind === 'select') for (const t of n.targets as Targets) if (isHidden(t)) passing.add(t.expr);
    if (n.kind === 'column' && n.name === EVENT_BODY_COLUMN) references.push(n);
  });
  if (!passing.size || references.some((r) => !passing.has(r))) return query;
  return mapNodes(query, (n: TreeNode) => {
    if (n.kind !== 'select') return n;
    const targets = n.targets as Targets;
    return targets.some(isHidden) ? { ...n, targets: targets.filter((t) => !isHidden(t)) } : n;
  });
}
