/**
 * The resolver: scopes, names and types. It walks the BigQuery syntax tree and builds the
 * Postgres tree, applying BigQuery semantics on the way (GROUP BY alias, float division,
 * JSON leaves typed from the source schema, UNNEST of single records read by path).
 *
 * It is also wall 1 of the sandbox: a table name must be a visible CTE, or a source when the
 * context allows sources; a function must be in FUNCTIONS.
 */
export { resolveCtes, resolveQuery, rootContext } from './queries.js';
export { TranslationState, type Column, type Context, type Resolved } from './scope.js';
