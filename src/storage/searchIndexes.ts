/**
 * The search indexes of a log table, as data: a `pg_trgm` GIN index on each text column a source
 * lists in `search_index` (`event_message` by default, and STRING hot leaves' columns), which
 * serves the `LIKE '%…%'`, `ILIKE`, `~` and `~*` tests the translator prints for message search
 * (src/sql/postgres/search.ts). indexUpkeep.ts builds them partition by partition, like the
 * covering indexes, and compacts each once its day is over.
 *
 * Pure, but for `trigramOpclass`: the operator class exists only where the pg_trgm extension was
 * created (migrations/1764300000000_search-index.js); without it no search index is built.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { hotColumnName, type HotLeaf } from './hotLeaves.js';
import { quoteIdent } from './logTables.js';

/** What every source starts with: the message is what the search box reads. */
export const DEFAULT_SEARCH_INDEX: readonly string[] = ['event_message'];

export interface SearchIndex {
  readonly name: string;
  /** The indexed column: `event_message` or a hot leaf's column (`metadata.request.path`). */
  readonly column: string;
}

const SUFFIX = '_search_';
const HASH_HEX = 8;
const MAX_IDENTIFIER_BYTES = 63;

/** The desired search indexes of `table` for its `search_index` setting (columns as stored: `event_message` or hot leaf paths). */
export function searchIndexes(table: string, columns: readonly string[]): SearchIndex[] {
  return [...new Set(columns)].sort().map((column) => {
    const suffix = SUFFIX + hash([table, column]);
    return { name: table.slice(0, MAX_IDENTIFIER_BYTES - suffix.length) + suffix, column };
  });
}

/** Whether `name` is a search index of `table` named here (any other index is an operator's: never dropped). */
export function isSearchIndexName(table: string, name: string): boolean {
  const prefix = table.slice(0, MAX_IDENTIFIER_BYTES - SUFFIX.length - HASH_HEX) + SUFFIX;
  return name.length === prefix.length + HASH_HEX && name.startsWith(prefix) && /^[0-9a-f]+$/.test(name.slice(prefix.length));
}

/** `USING gin (column <opclass>)`, for CREATE INDEX on the table or on one partition. */
export function searchIndexSql(index: SearchIndex, opclass: string): string {
  return `USING gin (${quoteIdent(index.column)} ${opclass})`;
}

/**
 * The columns of `setting` that can have a search index: `event_message`, and hot leaves of type
 * STRING (by their path, which is their column's name). Anything else is refused by the API
 * (SourceService.setSearchIndex, src/sources/service.ts) before it gets here.
 */
export function searchableColumns(leaves: readonly HotLeaf[]): string[] {
  return ['event_message', ...leaves.filter((l) => l.type === 'STRING').map((l) => hotColumnName(l.path))];
}

/** `gin_trgm_ops`, schema-qualified, or undefined when pg_trgm is not installed in this database. */
export async function trigramOpclass(db: Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>): Promise<string | undefined> {
  const { rows } = await db.query<{ opclass: string }>(
    `SELECT quote_ident(n.nspname) || '.gin_trgm_ops' AS opclass
       FROM pg_opclass c JOIN pg_namespace n ON n.oid = c.opcnamespace JOIN pg_am a ON a.oid = c.opcmethod
      WHERE c.opcname = 'gin_trgm_ops' AND a.amname = 'gin'`,
  );
  return rows[0]?.opclass;
}

function hash(parts: readonly string[]): string {
  return createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, HASH_HEX);
}
