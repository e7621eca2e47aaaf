/**
 * Log tables: schema `logs`, one table per source, `PARTITION BY RANGE ("timestamp")`, one
 * partition a day named `<table>_pYYYYMMDD`. Partitions are created ahead by a background job
 * and on demand at ingest; partitions entirely older than a source's retention are dropped.
 *
 * Table names come from `tableNameForSource` (lowercase, [a-z0-9_]) and are quoted anyway.
 */
import type { DatabaseCapabilities } from '../db/capabilities.js';
import type pg from 'pg';
import { READER_ROLE } from '../db/readOnlySession.js';
import { LOG_SCHEMA } from '../sql/catalog.js';

export { LOG_SCHEMA, logTableName } from '../sql/catalog.js';
const DAY_MS = 86_400_000;

/** A pool or one of its clients: what the storage functions query through. */
export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

export function qualifiedTable(table: string): string {
  return `${quoteIdent(LOG_SCHEMA)}.${quoteIdent(table)}`;
}

/** An index of a log table: key columns as SQL (`"timestamp" DESC`), INCLUDEd columns by name. */
export interface LogTableIndex {
  readonly name: string;
  readonly keys: readonly string[];
  readonly include: readonly string[];
}

/** `(keys) INCLUDE (columns)` of an index, for CREATE INDEX on the table or on one partition. */
export function indexColumnsSql(index: LogTableIndex): string {
  const include = index.include.length ? ` INCLUDE (${index.include.map(quoteIdent).join(', ')})` : '';
  return `(${index.keys.join(', ')})${include}`;
}

/**
 * Creates the partitioned table of a source and its indexes. Idempotent. `extraColumns`: column
 * definitions after the fixed ones (the hot leaves' columns, hotLeaves.ts hotColumnDefinitions);
 * `indexes`: the table's indexes (coveringIndexes.ts coveringIndexes), built at once: a new table
 * has no rows, so nothing needs CONCURRENTLY (a table with rows gets them from indexUpkeep.ts).
 */
export async function createLogTable(
  db: Queryable,
  table: string,
  extraColumns: readonly string[],
  indexes: readonly LogTableIndex[],
  capabilities: Pick<DatabaseCapabilities, 'lz4'>,
): Promise<void> {
  const t = qualifiedTable(table);
  const hotColumns = extraColumns.map((c) => `,\n      ${c}`).join('');
  await db.query(`
    CREATE TABLE IF NOT EXISTS ${t} (
      id text NOT NULL,
      "timestamp" timestamptz NOT NULL,
      event_message text,
      project text,
      metadata jsonb,
      body jsonb${hotColumns}
    ) PARTITION BY RANGE ("timestamp")`);
  // perf: lz4 for the JSON columns where the server has it (Postgres 14+ built with lz4; PGlite is
  // not, and keeps the default). With the default pglz, an edge event's ~1.9 KB jsonb `metadata`
  // does not compress (pglz gives up on jsonb's binary header) and goes out of line to TOAST, so
  // every leaf read is a TOAST fetch; lz4 keeps it inline (~1.5 KB). Partitions inherit the
  // setting. Measured in BENCHMARKS.md ("lz4").
  if (capabilities.lz4) {
    await db.query(`ALTER TABLE ${t} ALTER COLUMN metadata SET COMPRESSION lz4, ALTER COLUMN body SET COMPRESSION lz4`);
  }
  for (const index of indexes) await db.query(`CREATE INDEX IF NOT EXISTS ${quoteIdent(index.name)} ON ${t} ${indexColumnsSql(index)}`);
  await db.query(`GRANT SELECT ON ${t} TO ${READER_ROLE}`);
}

export async function dropLogTable(db: Queryable, table: string): Promise<void> {
  await db.query(`DROP TABLE IF EXISTS ${qualifiedTable(table)} CASCADE`);
}

/** UTC day start (ms) of a moment. */
export function dayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

export function partitionName(table: string, dayMs: number): string {
  return `${table}_p${new Date(dayMs).toISOString().slice(0, 10).replace(/-/g, '')}`;
}

/**
 * Storage parameters of every partition (a partition takes none from its parent). Index-only
 * scans (coveringIndexes.ts) skip the heap only on pages the visibility map marks all-visible,
 * which only VACUUM does; by default autovacuum visits an insert-only table after inserts of 20%
 * of its size, so most of today's partition would stay not all-visible all day. Here it comes
 * after 2% + 10,000 rows. PGlite accepts the parameters too (it runs no autovacuum).
 */
const PARTITION_OPTIONS = 'autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_vacuum_insert_threshold = 10000';

/**
 * Makes sure a partition exists for every UTC day from `fromMs` to `toMs` inclusive.
 * Concurrent callers (ingest on several replicas) may race on one day: the loser's
 * "already exists" error is the outcome it wanted, so it is ignored.
 */
export async function ensurePartitions(db: Queryable, table: string, fromMs: number, toMs: number): Promise<string[]> {
  const created: string[] = [];
  for (let day = dayStart(fromMs); day <= dayStart(toMs); day += DAY_MS) {
    const name = partitionName(table, day);
    const from = new Date(day).toISOString();
    const to = new Date(day + DAY_MS).toISOString();
    try {
      await db.query(
        `CREATE TABLE IF NOT EXISTS ${qualifiedTable(name)} PARTITION OF ${qualifiedTable(table)} FOR VALUES FROM ('${from}') TO ('${to}') WITH (${PARTITION_OPTIONS})`,
      );
      created.push(name);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
  return created;
}

function isAlreadyExists(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  // 42P07 duplicate_table; 23505 unique_violation on pg_type when two sessions race; 42P17 overlap after a race
  return code === '42P07' || code === '23505' || code === '42P17';
}

export interface PartitionInfo {
  name: string;
  /** Day start (ms since epoch, UTC) the partition covers. */
  dayMs: number;
}

export async function listPartitions(db: Queryable, table: string): Promise<PartitionInfo[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name
       FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid
       JOIN pg_class p ON p.oid = i.inhparent
       JOIN pg_namespace n ON n.oid = p.relnamespace
      WHERE n.nspname = $1 AND p.relname = $2
      ORDER BY c.relname`,
    [LOG_SCHEMA, table],
  );
  const out: PartitionInfo[] = [];
  for (const { name } of rows) {
    const dayMs = partitionDay(name);
    if (dayMs !== undefined) out.push({ name, dayMs });
  }
  return out;
}

/** The day (UTC start, ms) of a partition named by partitionName; undefined for another name. */
export function partitionDay(name: string): number | undefined {
  const m = /_p(\d{4})(\d{2})(\d{2})$/.exec(name);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : undefined;
}

/** Drops partitions whose whole day is older than `retentionDays` before `nowMs`. Returns the dropped names. */
export async function dropExpiredPartitions(db: Queryable, table: string, retentionDays: number, nowMs = Date.now()): Promise<string[]> {
  const cutoff = dayStart(nowMs) - retentionDays * DAY_MS;
  const dropped: string[] = [];
  for (const p of await listPartitions(db, table)) {
    if (p.dayMs + DAY_MS <= cutoff) {
      await db.query(`DROP TABLE IF EXISTS ${qualifiedTable(p.name)}`);
      dropped.push(p.name);
    }
  }
  return dropped;
}

export interface PartitionCount {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  partition: string;
  events: number;
  /** When the retention job drops it: the end of its day plus the retention. */
  drops_at: string;
}

/**
 * Events per day partition of a log table, oldest first, with when retention drops each. Exact
 * counts (a scan of each partition): an admin's view, not a hot path.
 */
export async function partitionCounts(db: Queryable, table: string, retentionDays: number): Promise<PartitionCount[]> {
  const partitions = await listPartitions(db, table);
  if (!partitions.length) return [];
  const { rows } = await db.query<{ name: string; events: string }>(
    partitions.map((p, i) => `SELECT $${i + 1}::text AS name, count(*) AS events FROM ${qualifiedTable(p.name)}`).join(' UNION ALL '),
    partitions.map((p) => p.name),
  );
  const counts = new Map(rows.map((r) => [r.name, Number(r.events)]));
  return partitions
    .sort((a, b) => a.dayMs - b.dayMs)
    .map((p) => ({
      day: new Date(p.dayMs).toISOString().slice(0, 10),
      partition: p.name,
      events: counts.get(p.name) ?? 0,
      drops_at: new Date(p.dayMs + DAY_MS + retentionDays * DAY_MS).toISOString(),
    }));
}
