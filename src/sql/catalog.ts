/**
 * The translator's input contract: what it must know about the log tables it reads, and
 * nothing else. The service's sources, storage and ingest fill it in (src/sources/service.ts
 * builds the lookup from the sources table) and import these definitions from here; the
 * translator (src/sql/) imports nothing from them, so it can be read and tested alone (lint
 * enforces it: eslint.config.js, "layers").
 *
 * A source is a table with four fixed columns, the jsonb columns `metadata` and `body` holding
 * an event's other fields in BigQuery's stored shape (every object a one-element array), an
 * inferred schema of those fields, and optionally hot leaves: JSON leaves also kept as columns
 * of their own, with facts (exact, dense) the translator asks Postgres about while planning.
 */

export type ScalarType = 'STRING' | 'INT64' | 'FLOAT64' | 'BOOL' | 'TIMESTAMP';
export type FieldType = ScalarType | 'RECORD';

export interface FieldSchema {
  readonly type: FieldType;
  /** An array in BigQuery terms. Records are always repeated in the stored shape. */
  readonly repeated: boolean;
  /** RECORD only: every value ever ingested was a single JSON object (stored as a one-element array). */
  readonly single?: boolean;
  /** RECORD only: its fields. */
  readonly fields?: Readonly<Record<string, FieldSchema>>;
}

/** Fields of a source below the top level columns, keyed by name (e.g. `metadata`). */
export type FieldMap = Readonly<Record<string, FieldSchema>>;

/** Physical columns every log table has; everything else of an event is under `body`. */
export const FIXED_COLUMNS = {
  id: { type: 'STRING', repeated: false },
  timestamp: { type: 'TIMESTAMP', repeated: false },
  event_message: { type: 'STRING', repeated: false },
  project: { type: 'STRING', repeated: false },
} as const satisfies Record<string, FieldSchema>;

export type FixedColumn = keyof typeof FIXED_COLUMNS;

/** The Postgres schema of the log tables and of the service's SQL functions (`logs.bq_*`, `logs.hot_leaf_*`). */
export const LOG_SCHEMA = 'logs';

/** `logs.<table>`, unquoted: how the translator's plans name a log table (src/sql/postgres/decompose.ts), and so the key of its hours in the hourly split (src/query/hourlyStore.ts). */
export function logTableName(table: string): string {
  return `${LOG_SCHEMA}.${table}`;
}

/** Columns holding jsonb in the stored BigQuery shape: `metadata` is its own column, other top-level fields live in `body`. */
export const METADATA_COLUMN = 'metadata';
export const BODY_COLUMN = 'body';

/**
 * What the translator needs to know about a source: the name queries use, the table to read,
 * and the schema of its JSON fields (top-level fields other than the fixed columns, including `metadata`).
 */
export interface SourceTable {
  /** Name used in queries, e.g. `cloudflare.logs.prod`. */
  readonly name: string;
  /** The Postgres schema and table, already safe identifiers, e.g. { pgSchema: 'logs', table: 'cloudflare_logs_prod' } (not the field map: that is `fields`). */
  readonly pgSchema: string;
  readonly table: string;
  /** Inferred schema of the JSON fields, keyed by top-level field name (`metadata`, and others stored in `body`). */
  readonly fields: FieldMap;
  /** Hot leaves the table has as columns (below; maintained by src/storage/hotLeaves.ts): path → column type. */
  readonly hot?: readonly HotLeaf[];
  /**
   * The common trigrams of its searched columns, by column (`event_message`, a hot leaf's column):
   * the `pg_trgm` trigrams in more than a few percent of a recent day's messages, measured by
   * src/storage/commonTrigrams.ts. A search for a needle holding one gives the index only the
   * needle's rare part (src/sql/postgres/search.ts, searchForIndexes). Absent: needles as written.
   */
  readonly commonTrigrams?: Readonly<Record<string, readonly string[]>>;
  /**
   * The function of each column's rare-trigram search index, by column: `logs.search_rare_trigrams_<hash>`
   * (`rareTrigramsFunction`), the column's `pg_trgm` trigrams less its common ones, frozen with
   * them (src/storage/commonTrigrams.ts). The search indexes of that column are GIN indexes on
   * `fn(column)`, and a search for a needle is printed with `fn(column) @> ARRAY[<its rare
   * trigrams>]` (src/sql/postgres/search.ts). Absent: the column's indexes, if any, are plain
   * `gin_trgm_ops` ones and the search is printed without it.
   */
  readonly rareTrigramIndexes?: Readonly<Record<string, string>>;
}

export type SourceLookup = (name: string) => SourceTable | undefined;

/** Widen two observations of one field into one: INT64+FLOAT64 → FLOAT64, scalar clashes → STRING. */
export function mergeField(a: FieldSchema | undefined, b: FieldSchema | undefined): FieldSchema | undefined {
  if (!a) return b;
  if (!b) return a;
  if (a.type === 'RECORD' && b.type === 'RECORD') {
    return {
      type: 'RECORD',
      repeated: true,
      single: Boolean(a.single && b.single),
      fields: mergeFieldMaps(a.fields ?? {}, b.fields ?? {}),
    };
  }
  if (a.type === 'RECORD' || b.type === 'RECORD') return a.type === 'RECORD' ? a : b; // a record wins over a stray scalar
  const repeated = a.repeated || b.repeated;
  if (a.type === b.type) return a.repeated === repeated ? a : { type: a.type, repeated };
  const numeric = new Set<FieldType>(['INT64', 'FLOAT64']);
  if (numeric.has(a.type) && numeric.has(b.type)) return { type: 'FLOAT64', repeated };
  return { type: 'STRING', repeated };
}

export function mergeFieldMaps(a: FieldMap, b: FieldMap): FieldMap {
  const out: Record<string, FieldSchema> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = mergeField(out[k], v)!;
  return out;
}

/** Types a hot column can have; TIMESTAMP leaves (JSON strings) are kept as their STRING text. */
export type HotLeafType = 'STRING' | 'INT64' | 'FLOAT64' | 'BOOL';
export const HOT_LEAF_TYPES: readonly HotLeafType[] = ['STRING', 'INT64', 'FLOAT64', 'BOOL'];

/** A declared hot leaf: `metadata.response.status_code` as an INT64 column. */
export interface HotLeaf {
  /** Dotted path from the event's top level; always under `metadata` (docs/API.md, "Hot leaves"). */
  readonly path: string;
  readonly type: HotLeafType;
  /** Which index of the log table INCLUDEs the leaf's column (src/storage/coveringIndexes.ts); absent: 'project'. */
  readonly index?: 'project' | 'timestamp' | 'both' | 'none';
}

/** The column of a hot leaf: its path, quoted (`"metadata.request.path"`), which no other column name can be. */
export function hotColumnName(path: string): string {
  return path;
}

/**
 * The facts as the translator's SQL asks them (migrations/1763810000000_hot-leaf-facts.js):
 * `logs.hot_leaf_exact(table, path)`, and `logs.hot_leaf_dense(table, path, depth)`, which is
 * exact and dense from `depth` down. IMMUTABLE, so the planner answers them while planning.
 */
export const HOT_LEAF_EXACT = `${LOG_SCHEMA}.hot_leaf_exact`;
export const HOT_LEAF_DENSE = `${LOG_SCHEMA}.hot_leaf_dense`;

/**
 * The rare-trigram search index's functions (src/storage/searchIndexes.ts): per frozen set of
 * common trigrams, `logs.search_rare_trigrams_<12 hex>(text) → text[]`, the text's `show_trgm`
 * less that set; and `logs.search_inner_trigrams(text[]) → text[]`, the trigrams of a list without
 * a space, with `logs.search_ascii_words(text) → text` (migrations/1765000000000_search-rare-trigrams.js),
 * which the translator applies to a pattern known only when the query runs (postgres/search.ts).
 * Both IMMUTABLE: the planner folds them on a constant.
 */
const RARE_TRIGRAMS_PREFIX = 'search_rare_trigrams_';
export const SEARCH_INNER_TRIGRAMS = `${LOG_SCHEMA}.search_inner_trigrams`;
export const SEARCH_ASCII_WORDS = `${LOG_SCHEMA}.search_ascii_words`;

/** The rare-trigram function of a frozen set, named by `hash` (12 hex digits), qualified. */
export function rareTrigramsFunction(hash: string): string {
  if (!/^[0-9a-f]{12}$/.test(hash)) throw new Error(`not a 12-digit hex hash: ${hash}`);
  return `${LOG_SCHEMA}.${RARE_TRIGRAMS_PREFIX}${hash}`;
}

const RARE_TRIGRAMS_NAME = new RegExp(`^${LOG_SCHEMA}\\.${RARE_TRIGRAMS_PREFIX}[0-9a-f]{12}$`);

/** Whether `name` (qualified) is a function `rareTrigramsFunction` names (postgres/functions.ts asks on every catalogue miss). */
export function isRareTrigramsFunction(name: string): boolean {
  return RARE_TRIGRAMS_NAME.test(name);
}

/**
 * The search hours: the open UTC day's partition (and the day before's, until its whole-day search
 * index is valid) gets a partial `pg_trgm` index per hour that is over, whose predicate is
 * `searchHourPredicate(hour)` (src/storage/indexUpkeep.ts builds them). The translator splits the
 * scan of a searched log table by those same hours (src/sql/postgres/searchHours.ts), so the
 * planner can prove each hour's predicate and read each hour through its index.
 *
 * The predicate is `"timestamp" <@ '[start,end)'::tstzrange` and not `"timestamp" >= start AND
 * "timestamp" < end` (the same rows): no btree index of the table matches `<@` in Postgres 15, and
 * its selectivity is a constant (rangesel does not estimate an element's containment), so a
 * partition without these indexes gives up the split at its first hour cheaply
 * (docs/ARCHITECTURE.md, "Search indexes"). The text here and the translator's tree are the same
 * constant range, which is how Postgres matches a query's clause to an index predicate (equal()).
 */
export const SEARCH_HOUR_MS = 3_600_000;
const SEARCH_DAY_MS = 86_400_000;

/** The hours that are over, by day, at one clock reading: the translation's input (`searchHoursAt`). */
export interface SearchHours {
  readonly days: readonly SearchDay[];
}
export interface SearchDay {
  /** The day's start (UTC midnight), ms. */
  readonly dayMs: number;
  /** The starts of its hours that are over, ms, from the day's first: consecutive. */
  readonly hours: readonly number[];
}

/**
 * How long after midnight a translation still splits the day before by its hours: until its
 * whole-day search index is built (the upkeep starts it at midnight; minutes at 1.4M events a day,
 * BENCHMARKS.md, "Search"). After that its hourly indexes are gone and the split would only cost
 * planning (each OR's arms are estimated on every partition).
 */
export const SEARCH_DAY_BEFORE_MS = 2 * SEARCH_HOUR_MS;

/** The hours over at `nowMs` of the open day, and of the day before (all 24) in its first SEARCH_DAY_BEFORE_MS; newest day first. */
export function searchHoursAt(nowMs: number): SearchHours {
  const today = Math.floor(nowMs / SEARCH_DAY_MS) * SEARCH_DAY_MS;
  const days = nowMs - today < SEARCH_DAY_BEFORE_MS ? [today, today - SEARCH_DAY_MS] : [today];
  const hoursOver = (dayMs: number) => {
    const end = Math.min(dayMs + SEARCH_DAY_MS, Math.floor(nowMs / SEARCH_HOUR_MS) * SEARCH_HOUR_MS);
    const hours: number[] = [];
    for (let h = dayMs; h < end; h += SEARCH_HOUR_MS) hours.push(h);
    return hours;
  };
  return { days: days.map((dayMs) => ({ dayMs, hours: hoursOver(dayMs) })).filter((d) => d.hours.length) };
}

/** A timestamp as both sides print it: ISO 8601 in UTC, read the same under any session TimeZone. */
export function searchHourLiteral(ms: number): string {
  return new Date(ms).toISOString();
}

/** The hour starting at `hourMs` as the text of a `tstzrange`: `[start,end)`, in UTC. */
export function searchHourRange(hourMs: number): string {
  return `[${searchHourLiteral(hourMs)},${searchHourLiteral(hourMs + SEARCH_HOUR_MS)})`;
}

/** The predicate of the partial search index of the hour starting at `hourMs`, as SQL (column `"timestamp"`). */
export function searchHourPredicate(hourMs: number): string {
  return `"timestamp" <@ '${searchHourRange(hourMs)}'::tstzrange`;
}
