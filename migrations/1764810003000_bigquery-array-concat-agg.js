/**
 * ARRAY_CONCAT_AGG (src/sql/library/aggregates.ts): Postgres' array_agg cannot collect arrays of
 * different lengths, so these aggregates concatenate as they go. NULL inputs are skipped (array_cat
 * ignores a NULL; jsonb's || is strict, so a strict transition keeps the state), NULL elements
 * kept; no rows, or only NULLs, give NULL, as in BigQuery. `bq_array_concat_agg` takes Postgres
 * arrays, `bq_jsonb_array_concat_agg` a source's repeated fields (jsonb arrays).
 */
export const up = (pgm) => {
  pgm.sql(`
    CREATE OR REPLACE AGGREGATE logs.bq_array_concat_agg(anycompatiblearray) (SFUNC = array_cat, STYPE = anycompatiblearray, PARALLEL = SAFE);
    CREATE OR REPLACE AGGREGATE logs.bq_jsonb_array_concat_agg(jsonb) (SFUNC = jsonb_concat, STYPE = jsonb, PARALLEL = SAFE);
  `);
};

export const down = (pgm) => {
  pgm.sql('DROP AGGREGATE IF EXISTS logs.bq_array_concat_agg(anycompatiblearray)');
  pgm.sql('DROP AGGREGATE IF EXISTS logs.bq_jsonb_array_concat_agg(jsonb)');
};
