/**
 * Hot leaves: leaves of single records (`metadata.request.path`) kept as typed columns beside
 * `metadata`, so a query that reads them does not decompress the ~1.5 KB JSON document per row
 * (docs/ARCHITECTURE.md, "Hot leaves"; measured in BENCHMARKS.md).
 *
 * The one rule everything here keeps: a hot column is either NULL or exactly the value the JSON
 * read gives (`(metadata->0->'response'->0->>'status_code')::bigint`). The translator reads
 * `coalesce(column, <JSON read>)` (src/sql/resolve/hot.ts), so a NULL column (a partition not
 * backfilled yet, a row written by a replica that did not know the leaf yet, a missing key, JSON
 * null, a value of another type than the column's) costs one JSON read and never changes a row.
 *
 * Columns are filled by the ingest writer (hotValues, in JS from the object it is about to
 * write) and, for rows that were there before the leaf was declared, by backfillPartition (in
 * SQL, partition by partition, in small batches). Generated STORED columns were measured against
 * this (BENCHMARKS.md, "Hot leaves"): adding one rewrites every partition under an ACCESS
 * EXCLUSIVE lock, which blocks ingest and queries for the whole rewrite.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { LOG_SCHEMA, qualifiedTable, quoteIdent, type Queryable } from './logTables.js';
import { hotColumnName, type HotLeaf, type HotLeafType } from '../sql/catalog.js';

export { HOT_LEAF_TYPES, hotColumnName, type HotLeaf, type HotLeafType } from '../sql/catalog.js';

type Connectable = Pick<pg.Pool, 'connect'>;

/** A hot leaf as the source row keeps it: with the partitions whose older rows still wait for the backfill. */
export interface HotLeafState extends HotLeaf {
  readonly pending_partitions: readonly string[];
}

export const PG_HOT_TYPES: Readonly<Record<HotLeafType, string>> = { STRING: 'text', INT64: 'bigint', FLOAT64: 'float8', BOOL: 'boolean' };

/**
 * The default of every hot column: an error (SQLSTATE UNKNOWN_LEAF_CODE). The ingest writer
 * always lists every hot column it knows, so the default runs only for a process that does not
 * know the leaf yet (it read the catalog before the leaf was declared); without it that row's
 * column would be NULL where its JSON has a value, and a query reading the column alone
 * (hotLeafFacts.ts) would miss it. The writer reads the catalog again and retries (src/ingest/write.ts).
 */
export const UNKNOWN_LEAF_CODE = 'LQ001';
function unknownLeafDefault(leaf: HotLeaf): string {
  return `logs.hot_leaf_unknown()::${PG_HOT_TYPES[leaf.type]}`;
}

/** Column definitions for CREATE TABLE (logTables.ts createLogTable). */
export function hotColumnDefinitions(leaves: readonly HotLeaf[]): string[] {
  return leaves.map((l) => `${quoteIdent(hotColumnName(l.path))} ${PG_HOT_TYPES[l.type]} DEFAULT ${unknownLeafDefault(l)}`);
}

/** perf: split once per path, not once per row and leaf at ingest (hotValue runs for every row written). */
const KEYS = new Map<string, readonly string[]>();

/** The path below `metadata` as keys (`metadata.request.path` → ['request', 'path']). */
function keysBelowMetadata(path: string): readonly string[] {
  let keys = KEYS.get(path);
  if (!keys) KEYS.set(path, (keys = path.split('.').slice(1)));
  return keys;
}

/**
 * What the translator's JSON read of a leaf finds in a row's `metadata`, navigated as Postgres
 * does it: `metadata->0->'request'->0->'path'` (`->0` is the first element of an array, else
 * NULL; `->'key'` a member of an object, else NULL). `json`: the leaf's JSON value, undefined
 * where the read is NULL (no record, no key, or JSON null). `reach`: the depth of the deepest
 * record on the way that is there (`metadata->0` is depth 0, `…->'request'->0` depth 1; -1: none),
 * which is what the translator's UNNEST guards test (src/sql/resolve/hot.ts). `single`: every
 * array on the way has exactly one element, the only case where the column may hold the leaf (an
 * UNNEST that really joins the elements reads each element's own leaf, not the first one's).
 */
export function jsonLeaf(metadata: unknown, leaf: HotLeaf): { json: unknown; reach: number; single: boolean } {
  const keys = keysBelowMetadata(leaf.path);
  let v: unknown = metadata;
  let single = true;
  for (let depth = 0; depth < keys.length; depth++) {
    if (!Array.isArray(v) || v.length === 0) return { json: undefined, reach: depth - 1, single };
    if (v.length !== 1) single = false;
    const record: unknown = v[0];
    if (typeof record !== 'object' || record === null || Array.isArray(record) || !Object.hasOwn(record, keys[depth]))
      return { json: undefined, reach: depth, single };
    v = (record as Record<string, unknown>)[keys[depth]];
    if (depth === keys.length - 1) return { json: v === null ? undefined : v, reach: depth, single };
  }
  return { json: undefined, reach: -1, single }; // a path has at least one key below metadata (hotLeafInput.ts)
}

/**
 * The leaf's value for the column, or null when the JSON read would not give exactly this value:
 * only a JSON value of the column's own type is written (a string for STRING, a safe integer for
 * INT64, …); anything else stays NULL and is read from the JSON (and the row is inexact:
 * hotLeafFacts.ts).
 */
export function hotValue(metadata: unknown, leaf: HotLeaf): string | number | boolean | null {
  return readValue(jsonLeaf(metadata, leaf), leaf);
}

/** hotValue from a read jsonLeaf already made (the writer's FactsObserver also needs the read). */
export function readValue(read: { json: unknown; single: boolean }, leaf: HotLeaf): string | number | boolean | null {
  return read.single ? columnValue(read.json, leaf) : null;
}

/** The column's value for a leaf's JSON value (undefined: none), by the rule of hotValue. */
function columnValue(v: unknown, leaf: HotLeaf): string | number | boolean | null {
  switch (leaf.type) {
    case 'STRING':
      return typeof v === 'string' ? v : null;
    case 'INT64':
      return typeof v === 'number' && Number.isSafeInteger(v) ? v : null;
    case 'FLOAT64':
      // float8 cannot hold what Postgres would refuse to cast ('1e400'::float8 is an error, not a value).
      return typeof v === 'number' && Number.isFinite(v) && (v === 0 || (Math.abs(v) >= 1e-300 && Math.abs(v) <= 1e300)) ? v : null;
    case 'BOOL':
      return typeof v === 'boolean' ? v : null;
  }
}

/**
 * A leaf's JSON read in SQL (backfill and its check, hotLeafFacts.ts): the records from
 * `metadata->0` down (`metadata->0`, `metadata->0->'request'->0`), the last key, and the arrays on
 * the way (`metadata`, `metadata->0->'request'`), which must have one element each.
 */
export function jsonLeafSql(path: string): { records: string[]; record: string; key: string; arrays: string[] } {
  const keys = keysBelowMetadata(path);
  const arrays = ['metadata'];
  const records = ['metadata->0'];
  for (const k of keys.slice(0, -1)) {
    const record = records[records.length - 1];
    arrays.push(`${record}->${quoteLiteral(k)}`);
    records.push(`${record}->${quoteLiteral(k)}->0`);
  }
  return { records, record: records[records.length - 1], key: quoteLiteral(keys[keys.length - 1]), arrays };
}

function quoteLiteral(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** The same rule as hotValue, in SQL: the value, or NULL where the JSON read is not exactly a value of the column's type. */
export function hotValueSql(leaf: HotLeaf): string {
  const { record, key, arrays } = jsonLeafSql(leaf.path);
  // No second element anywhere on the way (jsonLeaf's `single`); a non-array has none either.
  return `CASE WHEN ${arrays.map((a) => `${a}->1 IS NULL`).join(' AND ')} THEN ${valueSql(leaf, record, key)} END`;
}

function valueSql(leaf: HotLeaf, record: string, key: string): string {
  const json = `${record}->${key}`;
  const text = `${record}->>${key}`;
  switch (leaf.type) {
    case 'STRING':
      return `CASE WHEN jsonb_typeof(${json}) = 'string' THEN ${text} END`;
    case 'INT64':
      return `CASE WHEN jsonb_typeof(${json}) = 'number' AND ${text} ~ '^-?[0-9]{1,15}$' THEN (${text})::bigint END`;
    case 'FLOAT64':
      return `CASE WHEN jsonb_typeof(${json}) = 'number' AND (abs((${json})::numeric) BETWEEN 1e-300 AND 1e300 OR (${json})::numeric = 0) THEN (${text})::float8 END`;
    case 'BOOL':
      return `CASE WHEN jsonb_typeof(${json}) = 'boolean' THEN (${text})::boolean END`;
  }
}

/**
 * Adds the columns of `leaves` to a log table (nullable, no default: a change of the catalog
 * only, no rewrite). It still needs a moment's ACCESS EXCLUSIVE lock on the table and its
 * partitions, so it waits at most `lockTimeoutMs` for running queries and tries again, rather
 * than queueing every new query and insert behind a long one.
 */
export async function addHotColumns(db: Connectable, table: string, leaves: readonly HotLeaf[], lockTimeoutMs = 2_000): Promise<void> {
  // The default is set in the same statement: no row can be written without the column once it
  // exists (UNKNOWN_LEAF_CODE). A default set by ALTER COLUMN applies to new rows only: no rewrite.
  const add = leaves.flatMap((l) => {
    const column = quoteIdent(hotColumnName(l.path));
    return [`ADD COLUMN IF NOT EXISTS ${column} ${PG_HOT_TYPES[l.type]}`, `ALTER COLUMN ${column} SET DEFAULT ${unknownLeafDefault(l)}`];
  });
  await alterTable(db, table, add, lockTimeoutMs);
}

/**
 * The leaves among `leaves` from before their facts were kept (hotLeafFacts.ts): a column
 * without the UNKNOWN_LEAF_CODE default, or a leaf without a facts row.
 */
export async function uncheckedLeaves(db: Queryable, table: string, leaves: readonly HotLeaf[]): Promise<HotLeaf[]> {
  if (!leaves.length) return [];
  const { rows } = await db.query<{ name: string }>(
    `SELECT a.attname AS name FROM pg_attribute a
      WHERE a.attrelid = to_regclass($1) AND a.attname = ANY($2::text[]) AND NOT a.attisdropped
        AND (NOT a.atthasdef OR NOT EXISTS (SELECT 1 FROM hot_leaf_facts f WHERE f.table_name = $3 AND f.path = a.attname))`,
    [qualifiedTable(table), leaves.map((l) => hotColumnName(l.path)), table],
  );
  const names = new Set(rows.map((r) => r.name));
  return leaves.filter((l) => names.has(hotColumnName(l.path)));
}

/** Gives existing hot columns the UNKNOWN_LEAF_CODE default (a catalog change under a short lock, as addHotColumns). */
export async function setUnknownLeafDefaults(
  db: Connectable,
  table: string,
  leaves: readonly HotLeaf[],
  lockTimeoutMs = 2_000,
): Promise<void> {
  const set = leaves.map((l) => `ALTER COLUMN ${quoteIdent(hotColumnName(l.path))} SET DEFAULT ${unknownLeafDefault(l)}`);
  await alterTable(db, table, set, lockTimeoutMs);
}

/** Drops the columns of `paths` from a log table (as addHotColumns, a catalog change under a short lock). */
export async function dropHotColumns(db: Connectable, table: string, paths: readonly string[], lockTimeoutMs = 2_000): Promise<void> {
  const drop = paths.map((p) => `DROP COLUMN IF EXISTS ${quoteIdent(hotColumnName(p))}`);
  await alterTable(db, table, drop, lockTimeoutMs);
}

/** `ALTER TABLE` of a log table with `clauses` (none: no statement), waiting for locks as above. */
async function alterTable(db: Connectable, table: string, clauses: string[], lockTimeoutMs: number): Promise<void> {
  if (clauses.length) await withLockRetries(db, lockTimeoutMs, `ALTER TABLE ${qualifiedTable(table)} ${clauses.join(', ')}`);
}

/** `statement` in its own transaction under a `lockTimeoutMs` lock_timeout, tried again while a lock is not available. */
export async function withLockRetries(db: Connectable, lockTimeoutMs: number, statement: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const client = await db.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
      await client.query(statement);
      await client.query('COMMIT');
      return;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      // 55P03 lock_not_available: a long query holds the table; try again shortly.
      if ((err as { code?: string }).code !== '55P03' || attempt >= 20) throw err;
      await sleep(100 * (attempt + 1));
    } finally {
      client.release();
    }
  }
}

/** Pages per UPDATE of a backfill: each batch is its own short transaction (row locks only). */
const BACKFILL_PAGES = 256;

/**
 * Fills the hot columns of `leaves` in one partition's rows that were written before the
 * columns existed. Batches of BACKFILL_PAGES heap pages by `ctid` range, each its own statement
 * and transaction, so ingest (inserts take no lock these rows hold) and queries (MVCC) go on;
 * rows already filled, or whose leaf is not a value of the column's type, are not touched.
 * Returns the number of rows filled.
 */
export async function backfillPartition(db: Queryable, partition: string, leaves: readonly HotLeaf[]): Promise<number> {
  if (!leaves.length) return 0;
  const t = qualifiedTable(partition);
  const { rows } = await db.query<{ pages: string | null }>(
    `SELECT pg_relation_size(c.oid) / current_setting('block_size')::int AS pages
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
    [LOG_SCHEMA, partition],
  );
  if (!rows[0]) return 0; // dropped by retention meanwhile
  const pages = Number(rows[0].pages ?? 0);
  const set = leaves.map((l) => `${quoteIdent(hotColumnName(l.path))} = ${hotValueSql(l)}`).join(', ');
  const unfilled = leaves.map((l) => `(${quoteIdent(hotColumnName(l.path))} IS NULL AND ${hotValueSql(l)} IS NOT NULL)`).join(' OR ');
  let filled = 0;
  // Rows inserted meanwhile land on pages past `pages` and are written with their columns filled.
  for (let from = 0; from < pages; from += BACKFILL_PAGES) {
    const r = await db.query(
      `UPDATE ${t} SET ${set} WHERE ctid >= '(${from},0)'::tid AND ctid < '(${from + BACKFILL_PAGES},0)'::tid AND (${unfilled})`,
    );
    filled += r.rowCount ?? 0;
  }
  return filled;
}
