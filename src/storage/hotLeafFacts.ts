/**
 * What is known about each hot leaf's column (table `hot_leaf_facts`,
 * migrations/1763810000000_hot-leaf-facts.js), so that a query can read the column alone where
 * it is complete and never touch `metadata`, which is what lets Postgres answer from a covering
 * index (docs/ARCHITECTURE.md, "Hot leaves").
 *
 * A leaf's column is *exact* when, in every row, it is NULL exactly where the JSON read is and
 * otherwise holds the JSON read's value: every partition that had rows when it was declared has
 * been backfilled and checked, and no row holds a value of another type (the column stays NULL
 * for a string status code; the JSON read gives 500, or an error). It is *dense from depth d*
 * when every row that has the leaf's record at depth d (`metadata->0` is 0, `…->'request'->0` is
 * 1) has the column filled, so that the UNNEST guard `record IS NOT NULL` is `column IS NOT NULL`.
 *
 * Who keeps them true:
 * - the ingest writer observes every row it writes (FactsObserver) and records what it saw in
 *   the same transaction as the rows (recordObservedFacts), so a snapshot that sees a row sees
 *   its facts;
 * - the backfill checks each pending partition's older rows (checkPartition) and marks the leaf
 *   backfilled with its last partition (saveBackfilledFacts);
 * - a process that does not know a leaf yet cannot write rows without its column
 *   (hotLeaves.ts UNKNOWN_LEAF_CODE);
 * - declaring a leaf starts it afresh (resetFacts): not exact until its backfill is done.
 *
 * The translator asks `logs.hot_leaf_exact` / `logs.hot_leaf_dense` in the SQL it prints, and
 * the planner answers while planning (src/sql/resolve/hot.ts).
 */
import { partitionName, qualifiedTable, quoteIdent, type Queryable } from './logTables.js';
import { hotColumnName, jsonLeaf, jsonLeafSql, readValue, type HotLeaf } from './hotLeaves.js';

export { HOT_LEAF_DENSE, HOT_LEAF_EXACT } from '../sql/catalog.js';

/** What rows of one partition showed about one leaf: a row with a value of another type; the depth guards need from. */
export interface LeafFacts {
  readonly path: string;
  readonly partition: string;
  readonly inexact: boolean;
  /** 0 when every row with `metadata` had the column filled; keys below metadata + 1 at most. */
  readonly denseFrom: number;
}

/**
 * Computes each row's hot column values for the writer and notes, on the way, what the rows show
 * about the leaves, per partition (one JSON walk per row and leaf for both).
 */
export class FactsObserver {
  /** By leaf number, then by the day (ms) of the rows' partition. */
  private readonly seen: Map<number, { inexact: boolean; denseFrom: number }>[];

  constructor(
    readonly leaves: readonly HotLeaf[],
    private readonly table: string,
  ) {
    this.seen = leaves.map(() => new Map<number, { inexact: boolean; denseFrom: number }>());
  }

  /** The column value of leaf number `n` for a row's `metadata` (hotLeaves.ts hotValue); `dayMs`: the row's partition. */
  value(metadata: unknown, n: number, dayMs: number): string | number | boolean | null {
    const leaf = this.leaves[n];
    const read = jsonLeaf(metadata, leaf);
    const { json, reach } = read;
    const value = readValue(read, leaf);
    if (value === null && (json !== undefined || reach >= 0)) {
      const day = this.seen[n].get(dayMs) ?? { inexact: false, denseFrom: 0 };
      if (json !== undefined) day.inexact = true;
      if (reach + 1 > day.denseFrom) day.denseFrom = reach + 1;
      this.seen[n].set(dayMs, day);
    }
    return value;
  }

  /** Per leaf and partition, what the rows showed other than "exact and dense from `metadata` down". */
  observed(): LeafFacts[] {
    return this.leaves.flatMap((l, n) =>
      [...this.seen[n]].map(([dayMs, f]) => ({ path: l.path, partition: partitionName(this.table, dayMs), ...f })),
    );
  }
}

/**
 * Records what a batch's rows showed, in the transaction that writes them. Most batches show
 * nothing new: one read without locks; only facts that change take their row's lock.
 */
export async function recordObservedFacts(client: Queryable, table: string, observed: readonly LeafFacts[]): Promise<void> {
  if (!observed.length) return;
  const { rows } = await client.query<{ path: string; partition: string; inexact: boolean; dense_from: number }>(
    `SELECT path, partition, inexact, dense_from FROM hot_leaf_partition_facts
      WHERE table_name = $1 AND path = ANY($2::text[]) AND partition = ANY($3::text[])`,
    [table, [...new Set(observed.map((f) => f.path))], [...new Set(observed.map((f) => f.partition))]],
  );
  const known = new Map(rows.map((r) => [`${r.path}\n${r.partition}`, r]));
  const news = observed.filter((f) => {
    const k = known.get(`${f.path}\n${f.partition}`);
    return !k || (f.inexact && !k.inexact) || f.denseFrom > k.dense_from;
  });
  await mergeFacts(client, table, news);
}

/** Merges facts of partitions into the table: inexact stays once set, dense_from only rises. */
async function mergeFacts(client: Queryable, table: string, facts: readonly LeafFacts[]): Promise<void> {
  if (!facts.length) return;
  await client.query(
    `INSERT INTO hot_leaf_partition_facts AS f (table_name, path, partition, inexact, dense_from)
     SELECT $1, x.path, x.partition, x.inexact, x.dense_from
       FROM unnest($2::text[], $3::text[], $4::boolean[], $5::integer[]) AS x(path, partition, inexact, dense_from)
     ON CONFLICT (table_name, path, partition) DO UPDATE
       SET inexact = f.inexact OR EXCLUDED.inexact, dense_from = greatest(f.dense_from, EXCLUDED.dense_from)`,
    [table, facts.map((f) => f.path), facts.map((f) => f.partition), facts.map((f) => f.inexact), facts.map((f) => f.denseFrom)],
  );
}

/**
 * Starts the facts of newly declared leaves afresh (their columns are new): backfilled already
 * when the table had no partition to fill. Runs in the transaction that saves the declaration,
 * before any writer knows the leaves.
 */
export async function resetFacts(client: Queryable, table: string, paths: readonly string[], backfilled: boolean): Promise<void> {
  if (!paths.length) return;
  await client.query('DELETE FROM hot_leaf_partition_facts WHERE table_name = $1 AND path = ANY($2::text[])', [table, paths]);
  await client.query(
    `INSERT INTO hot_leaf_facts (table_name, path, backfilled) SELECT $1, unnest($2::text[]), $3
     ON CONFLICT (table_name, path) DO UPDATE SET backfilled = EXCLUDED.backfilled`,
    [table, paths, backfilled],
  );
}

/**
 * Marks leaves as not backfilled, keeping what writers have recorded: for columns that were
 * filled before their facts were kept (an install from before), which the backfill then checks
 * partition by partition.
 */
export async function unverifyFacts(client: Queryable, table: string, paths: readonly string[]): Promise<void> {
  if (!paths.length) return;
  await client.query(
    `INSERT INTO hot_leaf_facts (table_name, path) SELECT $1, unnest($2::text[])
     ON CONFLICT (table_name, path) DO UPDATE SET backfilled = false`,
    [table, paths],
  );
}

export async function deleteFacts(client: Queryable, table: string, paths: readonly string[]): Promise<void> {
  if (!paths.length) return;
  await client.query('DELETE FROM hot_leaf_partition_facts WHERE table_name = $1 AND path = ANY($2::text[])', [table, paths]);
  await client.query('DELETE FROM hot_leaf_facts WHERE table_name = $1 AND path = ANY($2::text[])', [table, paths]);
}

/** Forgets the facts of partitions dropped by retention (queries already ignore them: the functions read existing partitions only). */
export async function forgetPartitionFacts(db: Queryable, table: string, partitions: readonly string[]): Promise<void> {
  if (partitions.length)
    await db.query('DELETE FROM hot_leaf_partition_facts WHERE table_name = $1 AND partition = ANY($2::text[])', [table, partitions]);
}

/** A table's leaves as stored, with what their existing partitions show taken together (for tests and operators). */
export async function readFacts(
  db: Queryable,
  table: string,
): Promise<Array<{ path: string; backfilled: boolean; inexact: boolean; denseFrom: number }>> {
  const { rows } = await db.query<{ path: string; inexact: boolean; dense_from: number; backfilled: boolean }>(
    `SELECT f.path, f.backfilled, coalesce(bool_or(p.inexact), false) AS inexact, coalesce(max(p.dense_from), 0)::int AS dense_from
       FROM hot_leaf_facts f LEFT JOIN hot_leaf_partition_facts p ON p.table_name = f.table_name AND p.path = f.path
        AND to_regclass(format('logs.%I', p.partition)) IS NOT NULL
      WHERE f.table_name = $1 GROUP BY f.path, f.backfilled ORDER BY f.path`,
    [table],
  );
  return rows.map((r) => ({ path: r.path, inexact: r.inexact, denseFrom: r.dense_from, backfilled: r.backfilled }));
}

/**
 * What a partition's rows show about `leaves` (after its backfill): one scan. The same rule as
 * FactsObserver, in SQL: inexact where the column is NULL and the leaf is a JSON value; the
 * depth guards need from is one past the deepest record there in rows without the column.
 */
export async function checkPartition(db: Queryable, partition: string, leaves: readonly HotLeaf[]): Promise<LeafFacts[]> {
  if (!leaves.length) return [];
  const selects = leaves.flatMap((l, n) => {
    const column = quoteIdent(hotColumnName(l.path));
    const { records, record, key } = jsonLeafSql(l.path);
    const json = `${record}->${key}`;
    const reach = `CASE ${records
      .map((r, d) => `WHEN ${r} IS NOT NULL THEN ${d + 1}`)
      .reverse()
      .join(' ')} ELSE 0 END`;
    return [
      `coalesce(bool_or(${column} IS NULL AND jsonb_typeof(${json}) <> 'null'), false) AS i${n}`,
      `coalesce(max(${reach}) FILTER (WHERE ${column} IS NULL), 0) AS d${n}`,
    ];
  });
  let rows: Record<string, boolean | number>[];
  try {
    ({ rows } = await db.query<Record<string, boolean | number>>(`SELECT ${selects.join(', ')} FROM ${qualifiedTable(partition)}`));
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') return []; // undefined_table: dropped by retention, nothing left to check
    throw err;
  }
  const r = rows[0] ?? {};
  return leaves.map((l, n) => ({ path: l.path, partition, inexact: r[`i${n}`] === true, denseFrom: Number(r[`d${n}`] ?? 0) }));
}

/**
 * Saves what a backfilled partition showed, and marks `complete` (the leaves with no partition
 * left to fill) backfilled; in the transaction that takes the partition off the pending lists.
 */
export async function saveBackfilledFacts(
  client: Queryable,
  table: string,
  facts: readonly LeafFacts[],
  complete: readonly string[],
): Promise<void> {
  await mergeFacts(
    client,
    table,
    facts.filter((f) => f.inexact || f.denseFrom > 0),
  );
  if (complete.length)
    await client.query('UPDATE hot_leaf_facts SET backfilled = true WHERE table_name = $1 AND path = ANY($2::text[])', [table, complete]);
}
