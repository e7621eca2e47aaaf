/**
 * `logs.bq_int64` (CAST(STRING AS INT64), migrations/1764100000000_bigquery-string-functions.js),
 * made cheap per row:
 *
 * - It was declared STRICT, and Postgres inlines a STRICT SQL function only when its body is
 *   strict too; a CASE is not, so every row paid a call of the SQL function executor. Without
 *   STRICT the body is inlined into the query. The answer for NULL is still NULL (every branch of
 *   the CASE gives NULL for a NULL `v`), so nothing else changes: the translator's facts about it
 *   (src/sql/postgres/functions.ts) describe its behaviour, which is the same.
 * - It tested every value against a case-insensitive regular expression for BigQuery's
 *   hexadecimal form before casting. Text without an `x` or `X` cannot be in that form, so it is
 *   cast at once: the same value or the same error for every input.
 *
 * Why: Studio's network traffic report sums `CAST(content_length AS INT64)` twice a request over
 * the window; on lq_bench_1m (7 days, the largest project, ~200k rows) the query took 2.0 s, 0.17 s
 * with this definition (BENCHMARKS.md, "Studio's pages at volume").
 */
export const up = (pgm) => {
  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.bq_int64(v text) RETURNS bigint
      LANGUAGE sql IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE
      AS $$ SELECT CASE
        WHEN strpos(v, 'x') = 0 AND strpos(v, 'X') = 0 THEN v::bigint
        WHEN v ~* '^\\s*[+-]?0x[0-9a-f]{1,16}\\s*$' THEN
          (CASE WHEN btrim(v) LIKE '-%' THEN -1 ELSE 1 END) *
          ('x' || lpad(substring(v FROM '(?i)0x([0-9a-f]+)'), 16, '0'))::bit(64)::bigint
        ELSE v::bigint END $$;
  `);
};

export const down = (pgm) => {
  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.bq_int64(v text) RETURNS bigint
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE
        WHEN v ~* '^\\s*[+-]?0x[0-9a-f]{1,16}\\s*$' THEN
          (CASE WHEN btrim(v) LIKE '-%' THEN -1 ELSE 1 END) *
          ('x' || lpad(substring(v FROM '(?i)0x([0-9a-f]+)'), 16, '0'))::bit(64)::bigint
        ELSE v::bigint END $$;
  `);
};
