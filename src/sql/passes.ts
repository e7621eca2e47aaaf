/**
 * The rewrites for speed, run in this order on the resolved tree (src/sql/README.md,
 * "Performance"). Each keeps the rows: test/sql/differential.test.ts runs every query with and
 * without them. `translateQuery({ optimise: false })` runs none (index.ts), the only switch.
 *
 * Order matters where one pass makes work for the next: single records read by path leave
 * `IS NOT NULL` guards that narrowing moves out with their records; inlined constants remove the
 * scalar subqueries narrowing would refuse, and leave constant CTEs unread for the last pass.
 *
 * A rewrite that needs what only resolution knows reads it from the tree, where the resolver
 * records it (the `single` mark of an UNNEST: the source schema's one-record arrays).
 */
import type { PgQuery } from './postgres/ast.js';
import { inlineConstantCtes } from './postgres/constantCte.js';
import { dropUnobservableCteOrder } from './postgres/cteOrder.js';
import { countRowsOfNotNullColumns } from './postgres/countRows.js';
import { narrowAggregates } from './postgres/narrow.js';
import { readSingleRecordsByPath } from './postgres/singleRecord.js';
import { dropUnusedCtes, pruneUnreadCtes } from './postgres/unusedCtes.js';
import type { TranslationState } from './resolve/scope.js';

/** A resolved query and the `@name` of each of its `$n`. */
export interface PassInput {
  readonly query: PgQuery;
  readonly parameters: readonly string[];
}

export interface Pass {
  readonly name: string;
  /** `state`: the translation's, for fresh aliases and for what the resolver counted (a pass with nothing to act on is skipped). */
  run(input: PassInput, state: TranslationState): PassInput;
}

const onQuery = (name: string, rewrite: (query: PgQuery, state: TranslationState) => PgQuery): Pass => ({
  name,
  run: ({ query, parameters }, state) => ({ query: rewrite(query, state), parameters }),
});

export const PASSES: readonly Pass[] = [
  // First: the rewrites below then walk only what is read (a sandboxed query reads one or two of an endpoint's CTEs).
  onQuery('unread CTEs left out', pruneUnreadCtes),
  onQuery('single records read by path', readSingleRecordsByPath),
  onQuery('constant CTEs inlined', (query, state) => (state.scalarSubqueries ? inlineConstantCtes(query) : query)),
  onQuery('aggregate input narrowed', (query, state) => (state.groupedSelects ? narrowAggregates(query, () => state.alias()) : query)),
  // After narrowing: the counts it moved read their column through its derived table, which this follows.
  onQuery('count of a NOT NULL column counts rows', countRowsOfNotNullColumns),
  onQuery('unobservable CTE order dropped', dropUnobservableCteOrder),
  // Last: inlined constants leave CTEs unread; it also renumbers the parameters of what is left.
  { name: 'unread CTEs dropped', run: ({ query, parameters }) => dropUnusedCtes(query, parameters) },
];

export function runPasses(input: PassInput, state: TranslationState, passes: readonly Pass[] = PASSES): PassInput {
  let out = input;
  for (const pass of passes) out = pass.run(out, state);
  return out;
}
