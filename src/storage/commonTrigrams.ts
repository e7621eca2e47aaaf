/**
 * The common trigrams of a log table's searched columns: the `pg_trgm` trigrams found in more
 * than COMMON_SHARE of a sample of one finished day's values, kept in `search_common_trigrams`
 * (migrations/1764900000000_search-common-trigrams.js) and handed to the translator by the source
 * catalog (src/sources/catalog.ts; src/sql/catalog.ts `SourceTable.commonTrigrams`).
 *
 * Why: a GIN trigram scan of `LIKE '%needle%'` reads the whole posting list of each of the
 * needle's trigrams. A trigram in nearly every message (a constant in the message format) is a
 * list as long as the day, read for no filtering at all: on 1.4M edge events a day,
 * `LIKE '%3867a4c16d4558de%'` read 2,366 buffers in 80–150 ms where its rare part `3867a4c1`
 * took 2.7 ms (`6d4558de` is in every message). The translator gives the index only the
 * needle's part whose trigrams are all rare (src/sql/postgres/search.ts searchForIndexes).
 *
 * Measured, not guessed: the trigrams are pg_trgm's own (`show_trgm`, the extraction the index
 * uses), counted once per message, over a sample of SAMPLE_SIZE messages of the newest finished
 * day, before the upkeep builds anything (src/storage/indexUpkeep.ts step 5). Once measured on
 * MIN_SAMPLE values or more the set is frozen with its rare-trigram function: the column's search
 * indexes hold only the trigrams outside it (searchIndexes.ts), so the index and the translator
 * must use one set for good (`upkeepCommonTrigrams`). A database without the table (one not
 * migrated) or without pg_trgm measures nothing, and needles are then searched as written. The embedded database (PGlite)
 * ships pg_trgm, so a migrated one measures them too (test/db/embedded.test.ts runs its upkeep
 * without the migrations: there nothing is measured).
 */
import { qualifiedTable, quoteIdent, type Queryable } from './logTables.js';
import { rareTrigramsFunctionOf, rareTrigramsFunctionSql, type RareFunctions } from './searchIndexes.js';

/**
 * A trigram in more than this share of the sampled messages is common. 5%: a trigram's posting
 * list costs in proportion to its share, so a kept (rare) trigram costs at most 1/20 of one in
 * every message; with SAMPLE_SIZE messages a 5% share is 250 of them, an estimate within ±0.3%
 * (one standard error), so a trigram near the line is not in one day and out the next by chance
 * alone. Lower would shorten needles for little gain (the rare part loses selective trigrams);
 * higher would keep trigrams costing a tenth of the day and more.
 */
export const COMMON_SHARE = 0.05;
/** Messages sampled (show_trgm of each, counted in Postgres: well under a second at ~200 characters a message). */
export const SAMPLE_SIZE = 5_000;
/**
 * Fewer sampled values than this (a quiet day) are no measure: at 5% of 10 messages nearly every
 * trigram is "common", and the needles' rare parts would be short and unselective. Such a day is
 * recorded with no common trigrams, so searches print as written.
 */
export const MIN_SAMPLE = 200;
/** At most this many, the most frequent: the translator holds them per column of every source. */
export const MAX_COMMON_TRIGRAMS = 300;

/** Whether this database has the table (migrated); the embedded database's tests run the upkeep without migrations. */
async function hasTable(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ present: boolean }>(`SELECT to_regclass('search_common_trigrams') IS NOT NULL AS present`);
  return rows[0].present;
}

/**
 * Samples `partition`'s `column` (TABLESAMPLE SYSTEM: pages at random over the whole day, about
 * SAMPLE_SIZE rows by the planner's row count, at most twice that; a partition without a row
 * count yet is read from its start, up to that cap) and counts each trigram once per value.
 * `trgm` is pg_trgm's schema, quoted.
 */
export async function measureCommonTrigrams(
  db: Queryable,
  partition: string,
  column: string,
  trgm: string,
): Promise<{ sampled: number; trigrams: string[] }> {
  const { rows: stats } = await db.query<{ reltuples: number }>(
    `SELECT reltuples::float8 AS reltuples FROM pg_class WHERE oid = to_regclass($1)`,
    [qualifiedTable(partition)],
  );
  const rowsEstimate = stats[0]?.reltuples ?? -1;
  const percent = rowsEstimate > 0 ? Math.min(100, (100 * SAMPLE_SIZE) / rowsEstimate) : 100;
  const { rows } = await db.query<{ sampled: number; trigrams: string[] }>(
    `WITH sample AS MATERIALIZED (
       SELECT ${quoteIdent(column)}::text AS v FROM ${qualifiedTable(partition)} TABLESAMPLE SYSTEM ($1::float4)
        WHERE ${quoteIdent(column)} IS NOT NULL LIMIT $2
     ), counts AS (
       SELECT t, count(*) AS n FROM sample, unnest(${trgm}.show_trgm(v)) AS t GROUP BY t
     )
     SELECT (SELECT count(*) FROM sample)::int AS sampled,
            coalesce((SELECT array_agg(t ORDER BY n DESC, t) FROM (
              SELECT t, n FROM counts WHERE n > $3::float8 * (SELECT count(*) FROM sample) ORDER BY n DESC, t LIMIT $4) c), '{}') AS trigrams`,
    [percent, 2 * SAMPLE_SIZE, COMMON_SHARE, MAX_COMMON_TRIGRAMS],
  );
  return rows[0];
}

/**
 * For each of `columns` (searched columns, with the finished days of the table): its common
 * trigrams, frozen once measured on enough values, and the rare-trigram function of the frozen
 * set (searchIndexes.ts), created with it; returned by column, with what was done.
 *
 * A column not frozen yet is measured on the newest finished day (once per such day) and frozen
 * when that day had MIN_SAMPLE values; a quieter one is measured again the next day. Frozen, the
 * set is never measured again: every search index of the column is built on the set's function,
 * and a new set would mean building all of them again (to take a new one: delete the column's
 * row; docs/ARCHITECTURE.md, "Search indexes"). Rows of columns no longer searched are removed.
 */
export async function upkeepCommonTrigrams(
  db: Queryable,
  table: string,
  columns: readonly string[],
  finished: readonly { name: string; dayMs: number }[],
  trgm: string,
): Promise<{ done: string[]; rareFunctions: RareFunctions }> {
  const rareFunctions: Record<string, string> = {};
  if (!(await hasTable(db))) return { done: [], rareFunctions };
  const done: string[] = [];
  const kept = await db.query<{
    column_name: string;
    partition: string;
    sampled: number;
    trigrams: string[];
    index_function: string | null;
  }>(`SELECT column_name, partition, sampled, trigrams, index_function FROM search_common_trigrams WHERE table_name = $1`, [table]);
  for (const row of kept.rows) {
    if (columns.includes(row.column_name)) continue;
    await db.query(`DELETE FROM search_common_trigrams WHERE table_name = $1 AND column_name = $2`, [table, row.column_name]);
  }
  const newest = [...finished].sort((a, b) => b.dayMs - a.dayMs)[0];
  for (const column of columns) {
    let row = kept.rows.find((r) => r.column_name === column);
    if (!row?.index_function && newest && row?.partition !== newest.name) {
      let measured: { sampled: number; trigrams: string[] };
      try {
        measured = await measureCommonTrigrams(db, newest.name, column, trgm);
      } catch (err) {
        if ((err as { code?: string }).code === '42P01') continue; // undefined_table: dropped meanwhile (retention)
        throw err;
      }
      row = {
        column_name: column,
        partition: newest.name,
        sampled: measured.sampled,
        trigrams: measured.sampled < MIN_SAMPLE ? [] : measured.trigrams,
        index_function: null,
      };
      await db.query(
        `INSERT INTO search_common_trigrams (table_name, column_name, partition, sampled, trigrams, measured_at)
         VALUES ($1, $2, $3, $4, $5, now())
         ON CONFLICT (table_name, column_name) DO UPDATE
           SET partition = excluded.partition, sampled = excluded.sampled, trigrams = excluded.trigrams, measured_at = excluded.measured_at
           WHERE search_common_trigrams.index_function IS NULL`,
        [table, column, row.partition, row.sampled, row.trigrams],
      );
      done.push(`measured ${row.trigrams.length} common trigrams of ${column} on ${newest.name} (${row.sampled} sampled)`);
    }
    if (!row?.trigrams.length) continue;
    // Named by its definition: a release that changes the function's body gets a new one, and the
    // indexes are built again on it (the old ones kept until then: indexUpkeep.ts).
    const fn = rareTrigramsFunctionOf(row.trigrams);
    // Created with the freeze, and again if it went missing (the indexes on it would have gone with it).
    const { rows: present } = await db.query<{ present: boolean }>(`SELECT to_regprocedure($1) IS NOT NULL AS present`, [`${fn}(text)`]);
    if (!present[0].present) await db.query(rareTrigramsFunctionSql(fn, trgm, row.trigrams));
    if (row.index_function !== fn) {
      await db.query(`UPDATE search_common_trigrams SET index_function = $3 WHERE table_name = $1 AND column_name = $2`, [
        table,
        column,
        fn,
      ]);
      done.push(
        row.index_function
          ? `moved the search indexes of ${column} from ${row.index_function} to ${fn}`
          : `froze the ${row.trigrams.length} common trigrams of ${column}: its search indexes are on ${fn}`,
      );
    }
    rareFunctions[column] = fn;
  }
  return { done, rareFunctions };
}
