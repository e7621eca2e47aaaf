/**
 * BigQuery's mathematical functions where Postgres has no function with the same answers
 * (src/sql/library/math.ts). IMMUTABLE, STRICT and PARALLEL SAFE; they run on PGlite too.
 *
 * - `bq_safe_add`, `bq_safe_subtract`, `bq_safe_multiply`, `bq_safe_negate`: the operation, or
 *   NULL where it overflows (SAFE_ADD(9223372036854775807, 1)), for INT64 (bigint), NUMERIC and
 *   FLOAT64. Only the overflow (numeric_value_out_of_range) becomes NULL.
 * - `bq_bit_count`: the bits set in an INT64's two's complement (BIT_COUNT(-1) is 64).
 */
const TYPES = ['bigint', 'numeric', 'double precision'];
const BINARY = { add: '+', subtract: '-', multiply: '*' };

export const up = (pgm) => {
  for (const type of TYPES) {
    for (const [name, op] of Object.entries(BINARY)) {
      pgm.sql(`
        CREATE OR REPLACE FUNCTION logs.bq_safe_${name}(x ${type}, y ${type}) RETURNS ${type}
          LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
          AS $$ BEGIN RETURN x ${op} y; EXCEPTION WHEN numeric_value_out_of_range THEN RETURN NULL; END $$`);
    }
    pgm.sql(`
      CREATE OR REPLACE FUNCTION logs.bq_safe_negate(x ${type}) RETURNS ${type}
        LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
        AS $$ BEGIN RETURN -x; EXCEPTION WHEN numeric_value_out_of_range THEN RETURN NULL; END $$`);
  }
  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.bq_bit_count(x bigint) RETURNS bigint
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT bit_count(x::bit(64)) $$`);
};

export const down = (pgm) => {
  for (const type of TYPES) {
    for (const name of Object.keys(BINARY)) pgm.sql(`DROP FUNCTION IF EXISTS logs.bq_safe_${name}(${type}, ${type})`);
    pgm.sql(`DROP FUNCTION IF EXISTS logs.bq_safe_negate(${type})`);
  }
  pgm.sql('DROP FUNCTION IF EXISTS logs.bq_bit_count(bigint)');
};
