/**
 * The search indexes of a log table, as data: a `pg_trgm` GIN index on each text column a source
 * lists in `search_index` (`event_message` by default, and STRING hot leaves' columns), which
 * serves the `LIKE '%…%'`, `ILIKE`, `~` and `~*` tests the translator prints for message search
 * (src/sql/postgres/search.ts).
 *
 * One index per column **on each partition whose day is over**, and none on the partitioned table:
 * a partitioned index would be created on every new partition with it, so ingest would write
 * ~150 trigram entries per event into the open day's index (+323% per event, measured:
 * BENCHMARKS.md, "Search"). indexUpkeep.ts builds each once its day ends, compact
 * (`fastupdate = off`). The open day (and the day before, until its own is valid) has instead a
 * partial index per column **for each hour that is over**, `WHERE "timestamp" <@ '[h,h+1h)'::tstzrange`
 * (src/sql/catalog.ts searchHourPredicate): built after the hour, so ingest writes no trigram
 * entry for the hour being written and only tests the predicates; the translator splits a
 * search's scan by the same hours so the planner uses them (src/sql/postgres/searchHours.ts;
 * docs/ARCHITECTURE.md, "Search indexes").
 *
 * Once a column's common trigrams are frozen (src/storage/commonTrigrams.ts), its indexes are
 * **rare-trigram** ones: GIN (`array_ops`) on `logs.search_rare_trigrams_<hash>(column)`, the
 * column's `show_trgm` less the frozen common set (`rareTrigramsFunctionSql`). The common trigrams
 * (the message format: ~300 of them in every edge message) are 91% of a `gin_trgm_ops` index's
 * entries and no search reads them (src/sql/postgres/search.ts gives an index a needle's rare
 * trigrams only): one 1M-bench day's index is 9 MB (4.0% of the day) instead of 35 MB (15.3%;
 * BENCHMARKS.md, "Search"). The translator asks such an index for
 * `fn(column) @> ARRAY[<the needle's rare trigrams>]`. A column without a frozen set keeps plain
 * `gin_trgm_ops` indexes, which serve `LIKE`, `ILIKE`, `~` and `~*` themselves.
 *
 * Pure, but for `trigramOpclass`: the operator class exists only where the pg_trgm extension was
 * created (migrations/1764300000000_search-index.js); without it no search index is built.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { rareTrigramsFunction, searchHourLiteral, searchHourPredicate } from '../sql/catalog.js';
import { hotColumnName, type HotLeaf } from './hotLeaves.js';
import { quoteIdent } from './logTables.js';

/** What every source starts with: the message is what the search box reads. */
export const DEFAULT_SEARCH_INDEX: readonly string[] = ['event_message'];

export interface SearchIndex {
  /** The index's name, on `partition`. */
  readonly name: string;
  readonly partition: string;
  /** The indexed column: `event_message` or a hot leaf's column (`metadata.request.path`). */
  readonly column: string;
  /** An hourly index: the start of its hour (ms); absent for the whole day's. */
  readonly hourMs?: number;
  /** A rare-trigram index: its function (qualified), on the column; absent for a `gin_trgm_ops` one. */
  readonly rareFunction?: string;
}

/** The rare-trigram function of each column whose common trigrams are frozen (commonTrigrams.ts). */
export type RareFunctions = Readonly<Record<string, string>>;

const SUFFIX = '_search_';
const HASH_HEX = 8;
const MAX_IDENTIFIER_BYTES = 63;

/** The desired search indexes of one partition (a day that is over) for its table's `search_index` columns. */
export function searchIndexes(partition: string, columns: readonly string[], rare: RareFunctions = {}): SearchIndex[] {
  return [...new Set(columns)].sort().map((column) => searchIndex(partition, column, undefined, rare[column]));
}

/** One index; its name's hash holds what makes it (a rare-trigram one's function too), so another form is another index. */
function searchIndex(partition: string, column: string, hourMs: number | undefined, rareFunction: string | undefined): SearchIndex {
  const parts = [partition, column, ...(hourMs === undefined ? [] : [searchHourLiteral(hourMs)]), ...(rareFunction ? [rareFunction] : [])];
  const suffix = SUFFIX + hash(parts);
  return {
    name: partition.slice(0, MAX_IDENTIFIER_BYTES - suffix.length) + suffix,
    partition,
    column,
    ...(hourMs !== undefined && { hourMs }),
    ...(rareFunction && { rareFunction }),
  };
}

/** The hourly search indexes of one partition (the open day, or the day before) for the hours starting at `hours`. */
export function hourlySearchIndexes(
  partition: string,
  columns: readonly string[],
  hours: readonly number[],
  rare: RareFunctions = {},
): SearchIndex[] {
  return hours.flatMap((hourMs) => [...new Set(columns)].sort().map((column) => searchIndex(partition, column, hourMs, rare[column])));
}

/**
 * Whether `name` is a search index named here, of `relation` (a partition; or, for the first
 * design's partitioned indexes, the table): any other index is an operator's, never dropped.
 */
export function isSearchIndexName(relation: string, name: string): boolean {
  const prefix = relation.slice(0, MAX_IDENTIFIER_BYTES - SUFFIX.length - HASH_HEX) + SUFFIX;
  return name.length === prefix.length + HASH_HEX && name.startsWith(prefix) && /^[0-9a-f]+$/.test(name.slice(prefix.length));
}

/**
 * `USING gin (column <opclass>) WITH (fastupdate = off)`, for CREATE INDEX on one partition, with
 * the hour's predicate for an hourly one. Built on a day (an hour) that is over, so there is no
 * stream of inserts for a pending list to absorb: the few late events go straight into the index,
 * and a search never reads a pending list.
 */
export function searchIndexSql(index: Pick<SearchIndex, 'column' | 'hourMs' | 'rareFunction'>, opclass: string): string {
  const key = index.rareFunction ? `${index.rareFunction}(${quoteIdent(index.column)})` : `${quoteIdent(index.column)} ${opclass}`;
  const sql = `USING gin (${key}) WITH (fastupdate = off)`;
  return index.hourMs === undefined ? sql : `${sql} WHERE ${searchHourPredicate(index.hourMs)}`;
}

/**
 * The columns of `setting` that can have a search index: `event_message`, and hot leaves of type
 * STRING (by their path, which is their column's name). Anything else is refused by the API
 * (SourceService.setSearchIndex, src/sources/service.ts) before it gets here.
 */
export function searchableColumns(leaves: readonly HotLeaf[]): string[] {
  return ['event_message', ...leaves.filter((l) => l.type === 'STRING').map((l) => hotColumnName(l.path))];
}

/**
 * The rare-trigram function of a frozen common set (src/sql/catalog.ts `rareTrigramsFunction`),
 * named by a hash of its definition (the set and the body of rareTrigramsFunctionSql): the same
 * set is the same function, and a new set or a new body a new one (the upkeep then builds the
 * indexes again on it: commonTrigrams.ts).
 */
export function rareTrigramsFunctionOf(trigrams: readonly string[]): string {
  const definition = rareTrigramsFunctionSql('fn', 'trgm', trigrams);
  return rareTrigramsFunction(createHash('sha256').update(definition).digest('hex').slice(0, 12));
}

/** The longest text whose trigrams the rare-trigram function filters (rareTrigramsFunctionSql: a tsvector's 1 MB). */
export const RARE_TRIGRAMS_MAX_CHARS = 30_000;

/**
 * CREATE FUNCTION of `fn`: its text's trigrams (pg_trgm's `show_trgm`, what a `gin_trgm_ops`
 * index holds) less `trigrams`, as `text[]`. All in C (a tsvector's lexemes are a sorted set and
 * `ts_delete` removes a list from it): 33 µs per edge message of ~230 characters against 21 µs for
 * show_trgm alone; the same with a subquery over `unnest` took 270 µs. SQL of one expression, IMMUTABLE, neither
 * STRICT (Postgres inlines a STRICT function only when its body is strict, which a CASE is not;
 * NULL gives NULL anyway) nor with SET, so the planner inlines it, in the index's expression and in
 * the query alike; a standard `RETURN` body, so its dependency on pg_trgm is recorded and the
 * extension cannot be dropped from under the indexes; every name qualified, so nothing a caller
 * creates can stand in. A tsvector holds at most 1 MB: a text
 * longer than RARE_TRIGRAMS_MAX_CHARS (whose trigrams, up to ~2 a character of up to 8 bytes
 * printed, could pass it) keeps all its trigrams, common ones too, a superset in which any test
 * the translator asks still finds it (and one such message costs the index little).
 */
export function rareTrigramsFunctionSql(fn: string, trgm: string, trigrams: readonly string[]): string {
  const set = `'{${[...trigrams]
    .sort()
    .map((t) => `"${t.replace(/["\\]/g, (c) => '\\' + c).replace(/'/g, "''")}"`)
    .join(',')}}'`;
  return `CREATE OR REPLACE FUNCTION ${fn}(text) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN pg_catalog.length($1) OPERATOR(pg_catalog.<=) ${RARE_TRIGRAMS_MAX_CHARS}
      THEN pg_catalog.tsvector_to_array(pg_catalog.ts_delete(pg_catalog.array_to_tsvector(${trgm}.show_trgm($1)), ${set}::pg_catalog.text[]))
      ELSE ${trgm}.show_trgm($1) END`;
}

/** pg_trgm's schema, quoted, from trigramOpclass's answer (`"public".gin_trgm_ops` → `"public"`). */
export function trigramSchema(opclass: string): string {
  return opclass.slice(0, -'.gin_trgm_ops'.length);
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
