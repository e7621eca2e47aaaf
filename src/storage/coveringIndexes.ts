/**
 * The two indexes of a log table, as data: `("timestamp" DESC)` and `(project, "timestamp" DESC)`
 * (ascending once they INCLUDE columns: COVERING_KEYS), each INCLUDing the hot columns (src/storage/hotLeaves.ts) whose leaf asks for it (`index`:
 * 'project', the default, 'timestamp', 'both' or 'none'). A query that reads only the key and
 * INCLUDEd columns is answered by an index-only scan, without visiting the heap at all (the
 * wide `metadata` rows) on all-visible pages.
 *
 * Pure: the desired definitions from a table name and its leaves. createLogTable
 * (src/storage/logTables.ts) builds them on a new table; indexUpkeep.ts builds them on a table
 * with rows and drops the ones they replace.
 */
import { createHash } from 'node:crypto';
import { hotColumnName, type HotLeaf } from './hotLeaves.js';
import type { LogTableIndex } from './logTables.js';

export type HotLeafIndex = NonNullable<HotLeaf['index']>;
export const HOT_LEAF_INDEXES: readonly HotLeafIndex[] = ['project', 'timestamp', 'both', 'none'];

export type IndexKind = 'timestamp' | 'project';

export interface CoveringIndex extends LogTableIndex {
  readonly kind: IndexKind;
}

/** The keys of the indexes as they have always been, without INCLUDE (tables without hot leaves keep them). */
const PLAIN_KEYS: Readonly<Record<IndexKind, readonly string[]>> = {
  timestamp: ['"timestamp" DESC'],
  project: ['project', '"timestamp" DESC'],
};
/**
 * The keys of the covering indexes: ascending. perf/storage: ingest writes in time order, so
 * new entries of an ascending timestamp index go to its right end, where a page split leaves
 * the old page full; in a descending one they go to the left end and every split leaves two
 * half-empty pages (one day of edge rows: 21 MB against 12 MB for `("timestamp") INCLUDE (path,
 * url)`; BENCHMARKS.md, "Hot leaves"). Postgres reads an ascending index backwards for
 * `ORDER BY "timestamp" DESC` at the same cost.
 */
const COVERING_KEYS: Readonly<Record<IndexKind, readonly string[]>> = {
  timestamp: ['"timestamp"'],
  project: ['project', '"timestamp"'],
};
/** The names these indexes have always had, without INCLUDE (kept, so such tables see no change). */
const PLAIN_SUFFIX: Readonly<Record<IndexKind, string>> = { timestamp: '_timestamp_idx', project: '_project_timestamp_idx' };
const COVERING_SUFFIX: Readonly<Record<IndexKind, string>> = { timestamp: '_timestamp_c', project: '_project_timestamp_c' };

/** Postgres cuts identifiers at 63 bytes (NAMEDATALEN - 1). */
const MAX_IDENTIFIER_BYTES = 63;
const HASH_HEX = 8;

/** Whether the leaf's column goes into the index of `kind`. */
function includedIn(leaf: HotLeaf, kind: IndexKind): boolean {
  const index = leaf.index ?? 'project';
  return index === 'both' || index === kind;
}

/** The desired indexes of `table`: the timestamp one, then the project one; INCLUDE lists sorted, so the names are stable. */
export function coveringIndexes(table: string, leaves: readonly HotLeaf[]): CoveringIndex[] {
  return (['timestamp', 'project'] as const).map((kind) => {
    const include = leaves
      .filter((l) => includedIn(l, kind))
      .map((l) => hotColumnName(l.path))
      .sort();
    const keys = include.length ? COVERING_KEYS[kind] : PLAIN_KEYS[kind];
    return { kind, name: indexName(table, kind, keys, include), keys, include };
  });
}

/** The leaves whose columns `index` INCLUDEs (their backfill must be done before it is built on a partition). */
export function includedLeaves<L extends HotLeaf>(index: CoveringIndex, leaves: readonly L[]): L[] {
  return leaves.filter((l) => index.include.includes(hotColumnName(l.path)));
}

/**
 * `<table>_timestamp_idx` / `<table>_project_timestamp_idx` without INCLUDE (cut at 63 bytes as
 * Postgres cut them when it created them); else `<table>_timestamp_c<hash>` /
 * `<table>_project_timestamp_c<hash>`, the table part shortened so the hash always fits. The hash
 * is of the table name too, not only of the INCLUDE list: two long table names with the same
 * first characters still get different index names (index names are unique per schema).
 */
function indexName(table: string, kind: IndexKind, keys: readonly string[], include: readonly string[]): string {
  if (!include.length) return cut(table + PLAIN_SUFFIX[kind], MAX_IDENTIFIER_BYTES);
  const suffix = COVERING_SUFFIX[kind] + hash([table, kind, ...keys, ...include]);
  return cut(table, MAX_IDENTIFIER_BYTES - suffix.length) + suffix;
}

/** The name indexUpkeep.ts gives the index of `parent` it builds on one partition: unique by the hash, at most 63 bytes. */
export function childIndexName(partition: string, parent: string): string {
  const suffix = '_c' + hash([partition, parent]);
  return cut(partition, MAX_IDENTIFIER_BYTES - suffix.length) + suffix;
}

/**
 * The kind of an index of `table` that this module names (plain or covering), or undefined for
 * any other index (one an operator made: never dropped here).
 */
export function ownIndexKind(table: string, name: string): IndexKind | undefined {
  for (const kind of ['timestamp', 'project'] as const) {
    if (name === cut(table + PLAIN_SUFFIX[kind], MAX_IDENTIFIER_BYTES)) return kind;
    const prefix = cut(table, MAX_IDENTIFIER_BYTES - COVERING_SUFFIX[kind].length - HASH_HEX) + COVERING_SUFFIX[kind];
    if (name.length === prefix.length + HASH_HEX && name.startsWith(prefix) && /^[0-9a-f]+$/.test(name.slice(prefix.length))) return kind;
  }
  return undefined;
}

function hash(parts: readonly string[]): string {
  return createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, HASH_HEX);
}

/** Table and partition names are [a-z0-9_] (src/sources/schema.ts tableNameForSource): one byte a character. */
function cut(name: string, bytes: number): string {
  return name.slice(0, bytes);
}
