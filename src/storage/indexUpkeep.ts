/**
 * Brings the indexes of a log table that has rows to the definitions coveringIndexes.ts gives,
 * without blocking ingest or queries for longer than a short lock:
 *
 * 1. A missing index is created `ON ONLY` the partitioned table: a catalog entry, INVALID (and
 *    unused by the planner on the parent) until every partition has its index attached.
 * 2. Each partition without one gets it with `CREATE INDEX CONCURRENTLY` (no lock that stops
 *    writes; it cannot run inside a transaction, so it runs on a client of its own), then
 *    `ALTER INDEX … ATTACH PARTITION` (short lock, retried). A partition still listed in the
 *    `pending_partitions` of a leaf the index INCLUDEs is left for a later run: the backfill's
 *    UPDATEs would write a new index entry for every row they fill.
 *    A partition created (`CREATE TABLE … PARTITION OF`, logTables.ts ensurePartitions) while the
 *    parent index is still INVALID gets its own index built and attached right away, as with a
 *    valid one. Checked on PostgreSQL 15.20: `CREATE INDEX t_cov ON ONLY t (…)` (indisvalid f),
 *    then `CREATE TABLE t_p2 PARTITION OF t …` lists an index `t_p2_project_ts_s_idx` on t_p2,
 *    valid, whose pg_inherits parent is t_cov; t_cov stays INVALID until the partitions from
 *    before it are attached too. test/management/covering-indexes.test.ts checks it.
 * 3. Once the new index is valid, the index of the same kind it replaces is dropped. A DROP INDEX
 *    of a partitioned index cannot be CONCURRENTLY, so it takes the table's lock for a moment,
 *    waiting at most LOCK_TIMEOUT_MS at a time (hotLeaves.ts withLockRetries).
 *
 * 4. Once a day is over (COMPACT_AFTER_MS past its end), its partition's covering indexes are
 *    rebuilt once with `fillfactor = 100` (`REINDEX INDEX CONCURRENTLY`: no lock that stops
 *    ingest or queries), which is also how a rebuilt index is recognised. storage/perf: entries
 *    of `(project, "timestamp")` arrive at one place per project, so pages split in half while
 *    the day is written and end about 60% full; rebuilt, they are full (one day of edge rows:
 *    17 → 9.6 MB; BENCHMARKS.md, "Hot leaves"), and an index-only scan reads fewer pages.
 *
 * 5. The search indexes (searchIndexes.ts: a `pg_trgm` GIN index per column of the source's
 *    `search_index`) are not partitioned indexes: each partition whose day is over gets its own,
 *    built once with `CREATE INDEX CONCURRENTLY … WITH (fastupdate = off)` (compact, no pending
 *    list). The open day gets no whole-day one (BENCHMARKS.md, "Search": a trigram index on the
 *    open day costs +323% per event): instead each of its hours gets a partial one once the hour
 *    is over (HOURLY_AFTER_MS past its end), `WHERE "timestamp" <@ '[h,h+1h)'::tstzrange`, so
 *    ingest writes no trigram entry for the hour being written, only tests the predicates. The day
 *    before keeps its hourly ones until its whole-day index is valid (built just after midnight,
 *    minutes at 1.4M events a day), then they are dropped by the same run. Hourly ones are built first, oldest
 *    first (the translator's split is used from a day's first hour on: src/sql/postgres/searchHours.ts),
 *    then the days, newest first. A search reads the finished days through their indexes and the
 *    open day's hours through theirs, the hour not over by the `(project, timestamp)` index
 *    (docs/ARCHITECTURE.md, "Search indexes"). An index whose column left the setting is dropped,
 *    and so are the partitioned search indexes of the first design (on every partition, open day
 *    included). Without pg_trgm none is built. Before the builds, the common trigrams of each
 *    column are measured on the newest finished day and frozen (commonTrigrams.ts): from then on
 *    the column's indexes are rare-trigram ones (searchIndexes.ts), and an index of another form
 *    (a plain one from before the freeze) stays until the one replacing it on its partition is
 *    valid.
 *
 * An interrupted CONCURRENTLY build leaves an INVALID index behind; it is dropped and built again.
 * Several replicas may run this: a session advisory lock per table lets one at a time work on it.
 */
import type pg from 'pg';
import { childIndexName, coveringIndexes, includedLeaves, ownIndexKind, type CoveringIndex } from './coveringIndexes.js';
import { hotColumnName, withLockRetries, type HotLeafState } from './hotLeaves.js';
import { indexColumnsSql, listPartitions, qualifiedTable, quoteIdent, type PartitionInfo, type Queryable } from './logTables.js';
import { SEARCH_HOUR_MS } from '../sql/catalog.js';
import { upkeepCommonTrigrams } from './commonTrigrams.js';
import {
  hourlySearchIndexes,
  isSearchIndexName,
  searchableColumns,
  searchIndexes,
  searchIndexSql,
  trigramOpclass,
  trigramSchema,
  type RareFunctions,
  type SearchIndex,
} from './searchIndexes.js';

const LOCK_TIMEOUT_MS = 2_000;
/**
 * The client-side read limit of a CONCURRENTLY build, rebuild or drop, instead of the pool's 60 s
 * (src/db/pool.ts POOL_READ_TIMEOUT_MS): a GIN build of a busy day takes many minutes (BENCHMARKS.md,
 * "Search"), and a build cut off by the client is left INVALID and started over at the next run,
 * forever. It is background work holding only the table's advisory lock, so a stalled connection
 * may keep it that long.
 */
const BUILD_READ_TIMEOUT_MS = 6 * 3_600_000;
/** `text` as a query the client waits for up to BUILD_READ_TIMEOUT_MS. */
const longBuild = (text: string): pg.QueryConfig & { query_timeout: number } => ({ text, query_timeout: BUILD_READ_TIMEOUT_MS });
/** maintenance_work_mem of a search index build (reconcileSearch). */
const GIN_BUILD_MEMORY = '256MB';
const DAY_MS = 86_400_000;
/** Late events still arrive for a while after midnight; the rebuild waits for most of them. */
export const COMPACT_AFTER_MS = 2 * 3_600_000;
/**
 * How long after its end an hour's search index is built: events of a shipper's batch still
 * arrive with timestamps of the hour just over. One that arrives after the build goes into the
 * index (~150 trigram entries, as on a finished day); until the build the hour is read by the
 * `(project, timestamp)` index (src/sql/postgres/searchHours.ts).
 */
export const HOURLY_AFTER_MS = 2 * 60_000;
/**
 * The rows (pg_class.reltuples: the last VACUUM or ANALYZE, which logTables.ts triggers after
 * inserts of 2%) a day's partition needs before its hours get search indexes: a smaller day is
 * scanned in tens of milliseconds, and each hourly index is a CONCURRENTLY build and a catalog
 * entry (24 a day per column), not worth it for a quiet source.
 */
export const HOURLY_MIN_ROWS = 20_000;

/**
 * Reconciles the indexes of `table` with `leaves` and with `search` (the source's `search_index`
 * columns). Returns what it did (`created x`, `built x`, `dropped x`), empty when nothing.
 */
export async function upkeepIndexes(
  pool: pg.Pool,
  table: string,
  leaves: readonly HotLeafState[],
  search: readonly string[],
  nowMs = Date.now(),
): Promise<string[]> {
  const client = await pool.connect();
  const key = `logquery.indexes.${table}`;
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [key]);
    if (!rows[0].locked) {
      client.release();
      return []; // another replica (or run) is at it
    }
    const done = await reconcile(pool, client, table, leaves, nowMs);
    done.push(...(await reconcileSearch(pool, client, table, leaves, search, nowMs)));
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
    client.release();
    return done;
  } catch (err) {
    // Closing the connection releases the session lock it may hold.
    client.release(err as Error);
    throw err;
  }
}

async function reconcile(
  pool: pg.Pool,
  client: pg.PoolClient,
  table: string,
  leaves: readonly HotLeafState[],
  nowMs: number,
): Promise<string[]> {
  const done: string[] = [];
  const parent = qualifiedTable(table);
  let existing = await parentIndexes(client, table);
  if (!existing) return done; // the source was deleted meanwhile
  const desired = coveringIndexes(table, leaves);
  const days = await listPartitions(client, table);
  const partitions = days.map((p) => p.name);
  for (const index of withStopgaps(table, desired, existing)) {
    if (!existing.has(index.name)) {
      await client.query(`CREATE INDEX IF NOT EXISTS ${quoteIdent(index.name)} ON ONLY ${parent} ${indexColumnsSql(index)}`);
      done.push(`created ${index.name}`);
    }
    if (existing.get(index.name) === true) continue;
    const pending = new Set(includedLeaves(index, leaves).flatMap((l) => l.pending_partitions));
    const attached = await attachedChildren(client, index.name, COMPACT_COVERING);
    for (const partition of partitions) {
      if (attached.has(partition) || pending.has(partition)) continue;
      if (await buildOnPartition(pool, client, index.name, indexColumnsSql(index), partition))
        done.push(`built ${index.name} on ${partition}`);
    }
  }
  existing = (await parentIndexes(client, table)) ?? new Map();
  for (const [name] of existing) {
    const kind = ownIndexKind(table, name);
    const replacement = desired.find((d) => d.kind === kind);
    // Never before the replacement is valid: queries would lose their index meanwhile.
    if (!kind || !replacement || replacement.name === name || existing.get(replacement.name) !== true) continue;
    await withLockRetries(pool, LOCK_TIMEOUT_MS, `DROP INDEX IF EXISTS ${ident(name)}`);
    done.push(`dropped ${name}`);
  }
  done.push(...(await compactFinishedDays(pool, client, days, desired, nowMs)));
  return done;
}

/** Step 4: the covering indexes of partitions whose day is over, rebuilt full once. */
function compactFinishedDays(
  pool: pg.Pool,
  client: pg.PoolClient,
  days: readonly PartitionInfo[],
  desired: readonly CoveringIndex[],
  nowMs: number,
): Promise<string[]> {
  // The plain indexes are left as they always were.
  const covering = desired.filter((index) => index.include.length).map((index) => index.name);
  return rebuildFinishedDays(pool, client, days, covering, COMPACT_COVERING, nowMs);
}

/** The storage parameter a compacted child index is rebuilt with, which is also how it is recognised as done. */
interface Compaction {
  readonly option: string;
  readonly value: string;
}
const COMPACT_COVERING: Compaction = { option: 'fillfactor', value: '100' };

/** The children of the partitioned indexes `names` on partitions whose day is over, rebuilt once with `compaction`'s parameter. */
async function rebuildFinishedDays(
  pool: pg.Pool,
  client: pg.PoolClient,
  days: readonly PartitionInfo[],
  names: readonly string[],
  compaction: Compaction,
  nowMs: number,
): Promise<string[]> {
  const done: string[] = [];
  const finished = new Set(days.filter((p) => p.dayMs + DAY_MS + COMPACT_AFTER_MS <= nowMs).map((p) => p.name));
  if (!finished.size) return done;
  for (const name of names) {
    const rows = [...(await attachedChildren(client, name, compaction))].map(([partition, c]) => ({ partition, ...c }));
    for (const { partition, child, full } of rows) {
      if (full || !finished.has(partition)) continue;
      try {
        await withLockRetries(pool, LOCK_TIMEOUT_MS, `ALTER INDEX ${ident(child)} SET (${compaction.option} = ${compaction.value})`);
        await client.query(longBuild(`REINDEX INDEX CONCURRENTLY ${ident(child)}`));
      } catch (err) {
        if ((err as { code?: string }).code === '42P01') continue; // dropped meanwhile (retention)
        throw err;
      }
      done.push(`compacted ${child}`);
    }
  }
  return done;
}

/**
 * Step 5: a search index per column of `search` that exists (event_message, STRING hot leaves) on
 * each partition whose day is over (newest first: the search box reads the last days most, and a
 * GIN build of a busy day takes minutes), and an hourly one per hour over of the open day and of
 * the day before while that day's own is not valid (oldest first, before the days: an hour's build
 * takes seconds); a partition a leaf's backfill has still to fill waits. Search indexes of columns
 * no longer listed, on days not over (a clock set back), hourly ones of a day whose own is valid,
 * or of the first design (partitioned, open day included), dropped.
 */
async function reconcileSearch(
  pool: pg.Pool,
  client: pg.PoolClient,
  table: string,
  leaves: readonly HotLeafState[],
  search: readonly string[],
  nowMs: number,
): Promise<string[]> {
  const done: string[] = [];
  const parent = await parentIndexes(client, table);
  const opclass = await trigramOpclass(client);
  if (!parent || !opclass) return done;
  for (const [name] of parent) {
    if (!isSearchIndexName(table, name)) continue;
    await withLockRetries(pool, LOCK_TIMEOUT_MS, `DROP INDEX IF EXISTS ${ident(name)}`);
    done.push(`dropped ${name}`);
  }
  const searchable = new Set(searchableColumns(leaves));
  const columns = search.filter((c) => searchable.has(c));
  const days = await listPartitions(client, table);
  const finished = days.filter((p) => p.dayMs + DAY_MS <= nowMs).reverse();
  const busyNames = await busyPartitionNames(client, table);
  const busy = days.filter((p) => busyNames.has(p.name));
  // First the common trigrams, frozen with their rare-trigram function: the builds below use it.
  const trigrams = await upkeepCommonTrigrams(client, table, columns, finished, trigramSchema(opclass));
  done.push(...trigrams.done);
  const rare = trigrams.rareFunctions;
  const wanted = (valid: ReadonlySet<string>) => [
    ...hourlyIndexes(busy, columns, valid, nowMs, rare),
    ...finished.flatMap((p) => searchIndexes(p.name, columns, rare)),
  ];
  /**
   * Drops the indexes not wanted; returns the indexes found before the drops and what is wanted.
   * One not wanted stays while an index wanted on its partition and column is not valid yet: the
   * plain index a rare-trigram one replaces (or the hourly ones of a day whose own is building)
   * keeps serving searches meanwhile.
   */
  const dropUnwanted = async () => {
    const existing = await partitionSearchIndexes(client, table);
    const validNames = new Set(existing.filter((e) => e.valid).map((e) => e.name));
    const desired = wanted(validNames);
    const slot = (i: { partition: string; column: string }) => `${i.partition}\n${i.column}`;
    const waiting = new Set(desired.filter((d) => !validNames.has(d.name)).map(slot));
    for (const index of existing) {
      if (desired.some((d) => d.name === index.name) || (index.valid && waiting.has(slot(index)))) continue;
      await dropConcurrently(client, index.name);
      done.push(`dropped ${index.name}`);
    }
    return { existing, desired };
  };
  const { existing, desired } = await dropUnwanted();
  // perf: a GIN build collects its entries in maintenance_work_mem and writes them out each time it
  // is full; the default 64 MB makes a busy day's build several times longer. Only this session.
  await client.query(`SET maintenance_work_mem = '${GIN_BUILD_MEMORY}'`);
  try {
    for (const index of desired) {
      const had = existing.find((e) => e.name === index.name);
      if (had?.valid) continue;
      const pending = leaves.some((l) => hotColumnName(l.path) === index.column && l.pending_partitions.includes(index.partition));
      if (pending) continue;
      // Left INVALID by a build that was interrupted: IF NOT EXISTS would keep it as it is.
      if (had) await dropConcurrently(client, index.name);
      try {
        await client.query(
          longBuild(
            `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${quoteIdent(index.name)} ON ${qualifiedTable(index.partition)} ${searchIndexSql(index, opclass)}`,
          ),
        );
      } catch (err) {
        if ((err as { code?: string }).code === '42P01') continue; // undefined_table: dropped meanwhile (retention)
        throw err;
      }
      const hour = index.hourMs === undefined ? '' : ` for ${new Date(index.hourMs).toISOString().slice(0, 13)}h`;
      done.push(`built ${index.name} on ${index.partition}${hour}`);
    }
  } finally {
    await client.query('RESET maintenance_work_mem');
  }
  // The day before's hourly indexes go as soon as its whole-day one built above is valid, not at
  // the next run an hour later (with `gin_trgm_ops` they cost 1.2 times the whole-day one: BENCHMARKS.md, "Search"),
  // and a plain index as soon as the rare-trigram one replacing it is.
  await dropUnwanted();
  return done;
}

/**
 * The hourly search indexes wanted at `nowMs`: for each column, on the open day's partition and on
 * the day before's while that day's index of the column is not valid, one per hour over for
 * HOURLY_AFTER_MS; oldest first.
 */
function hourlyIndexes(
  days: readonly PartitionInfo[],
  columns: readonly string[],
  valid: ReadonlySet<string>,
  nowMs: number,
  rare: RareFunctions,
): SearchIndex[] {
  const openDay = Math.floor(nowMs / DAY_MS) * DAY_MS;
  return days
    .filter((p) => p.dayMs === openDay - DAY_MS || p.dayMs === openDay)
    .sort((a, b) => a.dayMs - b.dayMs)
    .flatMap((p) => {
      const hours: number[] = [];
      for (let h = p.dayMs; h < p.dayMs + DAY_MS && h + SEARCH_HOUR_MS + HOURLY_AFTER_MS <= nowMs; h += SEARCH_HOUR_MS) hours.push(h);
      const unindexed = columns.filter((c) => !searchIndexes(p.name, [c], rare).every((i) => valid.has(i.name)));
      return hourlySearchIndexes(p.name, unindexed, hours, rare);
    });
}

/** The partitions of `table` with HOURLY_MIN_ROWS rows or more, as the planner last counted them. */
async function busyPartitionNames(client: pg.PoolClient, table: string): Promise<Set<string>> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid
      WHERE h.inhparent = to_regclass($1) AND c.reltuples >= $2`,
    [qualifiedTable(table), HOURLY_MIN_ROWS],
  );
  return new Set(rows.map((r) => r.name));
}

/** The search indexes (named by searchIndexes.ts) on the partitions of `table`, with whether each is valid. */
async function partitionSearchIndexes(
  client: Queryable,
  table: string,
): Promise<{ name: string; partition: string; column: string; valid: boolean }[]> {
  const { rows } = await client.query<{ partition: string; name: string; key: string; valid: boolean }>(
    `SELECT t.relname AS partition, c.relname AS name, pg_get_indexdef(i.indexrelid, 1, true) AS key, i.indisvalid AS valid
       FROM pg_inherits h JOIN pg_class t ON t.oid = h.inhrelid
       JOIN pg_index i ON i.indrelid = t.oid JOIN pg_class c ON c.oid = i.indexrelid
      WHERE h.inhparent = to_regclass($1)`,
    [qualifiedTable(table)],
  );
  return rows.filter((r) => isSearchIndexName(r.partition, r.name)).map(({ key, ...r }) => ({ ...r, column: indexedColumn(key) }));
}

/** The column of a search index's key as Postgres prints it: `event_message`, `"metadata.request.path"`, or either inside `fn(…)`. */
function indexedColumn(key: string): string {
  const inner = /^[\w.]+\((.*)\)$/.exec(key)?.[1] ?? key;
  return inner.startsWith('"') ? inner.slice(1, -1).replaceAll('""', '"') : inner;
}

/** DROP INDEX CONCURRENTLY: no lock that stops ingest or queries. */
async function dropConcurrently(client: pg.PoolClient, name: string): Promise<void> {
  await client.query(longBuild(`DROP INDEX CONCURRENTLY IF EXISTS ${ident(name)}`));
}

/**
 * `desired`, each preceded by the plain index of its kind when the table has no valid index of
 * that kind and the desired one is not valid yet. That happens when a DROP COLUMN of a hot leaf
 * (SourceService applyHotLeaves) dropped every index INCLUDing it: the covering replacement may
 * wait for a backfill, the plain one waits for nothing, so queries get their index back as soon as
 * it is built; it is dropped again once the covering one is valid.
 */
function withStopgaps(table: string, desired: readonly CoveringIndex[], existing: ReadonlyMap<string, boolean>): CoveringIndex[] {
  const plain = coveringIndexes(table, []);
  return desired.flatMap((index) => {
    const stopgap = plain.find((p) => p.kind === index.kind)!;
    const covered = [...existing].some(([name, valid]) => valid && ownIndexKind(table, name) === index.kind);
    return covered || stopgap.name === index.name ? [index] : [stopgap, index];
  });
}

/**
 * Builds the index `parent` (of definition `definition`: `(keys) INCLUDE (…)`, `USING gin (…)`) on
 * one partition and attaches it to the parent's. False when the partition is gone (retention).
 */
async function buildOnPartition(
  pool: pg.Pool,
  client: pg.PoolClient,
  parent: string,
  definition: string,
  partition: string,
): Promise<boolean> {
  const child = childIndexName(partition, parent);
  const { rows } = await client.query<{ valid: boolean }>(`SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)`, [
    ident(child),
  ]);
  // Left INVALID by a build that was interrupted: IF NOT EXISTS would keep it as it is.
  if (rows[0] && !rows[0].valid) await client.query(longBuild(`DROP INDEX CONCURRENTLY IF EXISTS ${ident(child)}`));
  try {
    await client.query(
      longBuild(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${quoteIdent(child)} ON ${qualifiedTable(partition)} ${definition}`),
    );
    await withLockRetries(pool, LOCK_TIMEOUT_MS, `ALTER INDEX ${ident(parent)} ATTACH PARTITION ${ident(child)}`);
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') return false; // undefined_table: dropped meanwhile
    throw err;
  }
  return true;
}

/** The indexes on the partitioned table itself, by name, with whether each is valid; undefined when the table is gone. */
async function parentIndexes(client: pg.PoolClient, table: string): Promise<Map<string, boolean> | undefined> {
  const { rows } = await client.query<{ name: string | null; valid: boolean | null }>(
    `SELECT c.relname AS name, i.indisvalid AS valid
       FROM (SELECT to_regclass($1) AS oid) t
       LEFT JOIN pg_index i ON i.indrelid = t.oid
       LEFT JOIN pg_class c ON c.oid = i.indexrelid
      WHERE t.oid IS NOT NULL`,
    [qualifiedTable(table)],
  );
  if (!rows.length) return undefined;
  return new Map(rows.filter((r) => r.name !== null).map((r) => [r.name!, r.valid === true]));
}

/** The partitions whose index is attached to the partitioned index `name`, with that index and whether it was compacted (step 4). */
async function attachedChildren(
  client: pg.PoolClient,
  name: string,
  compaction: Compaction,
): Promise<Map<string, { child: string; full: boolean }>> {
  const { rows } = await client.query<{ partition: string; child: string; full: boolean }>(
    `SELECT t.relname AS partition, ci.relname AS child, coalesce($2 = ANY (ci.reloptions), false) AS full
       FROM pg_inherits h JOIN pg_class ci ON ci.oid = h.inhrelid JOIN pg_index i ON i.indexrelid = ci.oid
       JOIN pg_class t ON t.oid = i.indrelid
      WHERE h.inhparent = to_regclass($1)`,
    [ident(name), `${compaction.option}=${compaction.value}`],
  );
  return new Map(rows.map((r) => [r.partition, { child: r.child, full: r.full }]));
}

/** An index name qualified with the log schema, where indexes of log tables live (CREATE INDEX takes it unqualified). */
function ident(name: string): string {
  return qualifiedTable(name);
}
