/**
 * What is known about each hot leaf's column (src/storage/hotLeafFacts.ts), so that a query can
 * read the column alone where it is complete, and skip `metadata` (and so use an index-only scan):
 *
 * - `hot_leaf_facts.backfilled`: every partition that had rows when the leaf was declared has
 *   been filled and checked (the backfill job sets it when the leaf's last pending partition is
 *   done);
 * - per partition, `hot_leaf_partition_facts`:
 *   - `inexact`: some row's column is NULL where its JSON read is not (a value of another type:
 *     a string status code, a float where an INT64 leaf is declared): set by the ingest writer in
 *     the same transaction as that row, and by the backfill's check of older rows;
 *   - `dense_from`: the shallowest record depth at which every row that has the record has the
 *     column filled (0: `metadata` itself; 1: `metadata.request`; …). A guard `record IS NOT
 *     NULL` at depth ≥ dense_from is then `column IS NOT NULL`.
 *   Per partition, so that what one odd event did ends when retention drops its day: facts of a
 *   partition that no longer exists are not read.
 *
 * `logs.hot_leaf_exact(table, path)` and `logs.hot_leaf_dense(table, path, depth)` read them. They
 * are declared IMMUTABLE, which they are not, on purpose: the planner calls an immutable function
 * with constant arguments once while planning and folds `CASE WHEN logs.hot_leaf_exact(…) THEN
 * column ELSE coalesce(column, <JSON read>) END` to one branch, so the plan names `metadata` only
 * where the column may be incomplete. That is sound because every endpoint query is planned in
 * the transaction that runs it (an unnamed statement, never a cached plan) under REPEATABLE READ
 * (src/query/execute.ts), so the facts the planner read and the rows the executor reads come from
 * one snapshot, and the writer changes the facts in the transaction that writes the rows.
 * SECURITY DEFINER: the reader role that runs endpoint queries cannot read the service's tables.
 *
 * `logs.hot_leaf_unknown()` is the DEFAULT of every hot column (src/storage/hotLeaves.ts): a
 * process that does not know a leaf yet writes rows without its column, which would leave a
 * NULL where the JSON has a value. The default turns that into an error (SQLSTATE LQ001) that
 * the writer answers by reading the catalog again and writing the batch with the column.
 */
export const up = (pgm) => {
  pgm.sql(`
    CREATE TABLE hot_leaf_facts (
      table_name text NOT NULL,
      path text NOT NULL,
      backfilled boolean NOT NULL DEFAULT false,
      PRIMARY KEY (table_name, path)
    )`);
  pgm.sql(`
    CREATE TABLE hot_leaf_partition_facts (
      table_name text NOT NULL,
      path text NOT NULL,
      partition text NOT NULL,
      inexact boolean NOT NULL DEFAULT false,
      dense_from integer NOT NULL DEFAULT 0,
      PRIMARY KEY (table_name, path, partition)
    )`);
  // PL/pgSQL, not SQL: it keeps the plans of its queries for the session (a SQL function plans
  // its body at every call), and without a SET clause (which saves and restores settings at
  // every call): a query planned with eight of these calls spent 0.36 ms on them against 0.06.
  // Being SECURITY DEFINER without a pinned search_path, it names its tables with their schema
  // and its operators and functions with pg_catalog, so nothing a caller creates can stand in.
  pgm.sql(`
    DO $do$ BEGIN
      EXECUTE format($f$
        CREATE OR REPLACE FUNCTION logs.hot_leaf_dense(tbl text, leaf text, depth integer) RETURNS boolean
          LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SECURITY DEFINER
          AS $b$ BEGIN
            IF NOT coalesce((SELECT f.backfilled FROM %1$I.hot_leaf_facts f
                              WHERE f.table_name OPERATOR(pg_catalog.=) tbl AND f.path OPERATOR(pg_catalog.=) leaf), false) THEN
              RETURN false;
            END IF;
            RETURN NOT EXISTS (
              SELECT 1 FROM %1$I.hot_leaf_partition_facts p
               WHERE p.table_name OPERATOR(pg_catalog.=) tbl AND p.path OPERATOR(pg_catalog.=) leaf
                 AND (p.inexact OR p.dense_from OPERATOR(pg_catalog.>) depth)
                 AND pg_catalog.to_regclass(pg_catalog.format('logs.%%I', p.partition)) IS NOT NULL);
          END $b$$f$, current_schema());
      -- Exact: dense from the deepest record down is implied by no row being inexact only; a depth
      -- past every record (dense_from is at most the number of keys below metadata) tests exactly that.
      EXECUTE $f$
        CREATE OR REPLACE FUNCTION logs.hot_leaf_exact(tbl text, leaf text) RETURNS boolean
          LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
          AS $b$ SELECT logs.hot_leaf_dense(tbl, leaf, 2147483647) $b$$f$;
    END $do$`);
  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.hot_leaf_unknown() RETURNS text LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      RAISE EXCEPTION USING ERRCODE = 'LQ001',
        MESSAGE = 'a hot leaf column was left out of an insert: the writer does not know the leaf yet';
    END $$`);
};

export const down = (pgm) => {
  pgm.sql('DROP FUNCTION IF EXISTS logs.hot_leaf_exact(text, text)');
  pgm.sql('DROP FUNCTION IF EXISTS logs.hot_leaf_dense(text, text, integer)');
  pgm.sql('DROP FUNCTION IF EXISTS logs.hot_leaf_unknown()');
  pgm.sql('DROP TABLE IF EXISTS hot_leaf_facts, hot_leaf_partition_facts');
};
