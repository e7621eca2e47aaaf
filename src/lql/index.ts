/**
 * LQL, the original service's search language (docs/LQL.md), as a front end of the SQL translator:
 *
 *   const { translation, shape } = translateLql('error m.status:>=500 t:last@1h', source, sources, { limit: 100 });
 *   // translation.sql: one Postgres SELECT, printed and checked (both sandbox walls) by src/sql/
 *
 *   const caller = lqlSandbox('m.status:500', endpointQuery);  // lql= of a sandboxable endpoint
 *   translateQuery({ query: endpointQuery, sources, ...caller });
 *
 * parser.ts reads the text into rules (rules.ts); build.ts makes the translator's syntax tree.
 */
import { queryCtes, translateQuery, type Translation } from '../sql/index.js';
import type * as Q from '../sql/ast/queries.js';
import type { SourceLookup, SourceTable } from '../sources/schema.js';
import { buildLqlQuery, type EventsWindow } from './build.js';
import { LqlError } from './errors.js';
import { parseLql } from './parser.js';

export { LqlError } from './errors.js';
export { parseLql, LEVELS } from './parser.js';
export { escapeLike, type EventsWindow } from './build.js';
export type { LqlRules } from './rules.js';

export interface LqlTranslation {
  readonly translation: Translation;
  readonly shape: 'events' | 'chart';
}

/** LQL over one source, newest first within `window`; throws SqlError (LqlError for LQL's own problems). */
export function translateLql(text: string, source: SourceTable, sources: SourceLookup, window: EventsWindow = {}): LqlTranslation {
  const { query, shape } = buildLqlQuery(parseLql(text), { kind: 'source', source }, window);
  return { translation: translateQuery({ query: text, parsed: query, sources }), shape };
}

/**
 * `lql=` of a sandboxable endpoint, as the original reads it: over the CTE that `f:` names, or the
 * endpoint's only CTE. What translateQuery takes in place of `sandboxSql`.
 */
export function lqlSandbox(text: string, endpointQuery: string): { sandboxSql: string; sandboxParsed: Q.Query } {
  const rules = parseLql(text);
  const ctes = queryCtes(endpointQuery);
  let name: string;
  if (rules.from) {
    const from = rules.from;
    if (!ctes.some((c) => c.toLowerCase() === from.table.toLowerCase()))
      throw new LqlError(`f:${from.table} is not a CTE of this endpoint (${ctes.join(', ') || 'it has none'})`, text, from.pos);
    name = from.table;
  } else if (ctes.length === 1) name = ctes[0];
  else if (ctes.length === 0) throw new LqlError('this endpoint has no WITH clause, so LQL has nothing to read', text, 0);
  else throw new LqlError(`the endpoint has several CTEs (${ctes.join(', ')}): name one with f:name`, text, 0);
  return { sandboxSql: text, sandboxParsed: buildLqlQuery(rules, { kind: 'cte', name }).query };
}
