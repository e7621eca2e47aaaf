/**
 * `logs.bq_timestamp(text)`: a string read as a TIMESTAMP the BigQuery way (UTC unless the text
 * names its zone), declared IMMUTABLE so the planner folds it when its argument is a bound
 * parameter. The translator prints it for `cast(@param as timestamp)` and for a parameter
 * compared with a timestamp (src/sql/coerce.ts, stringToTimestamp).
 *
 * Why: the same rule written inline (`CASE WHEN $1 ~ zone THEN $1::timestamptz ELSE
 * timezone('UTC', $1::timestamp) END`) uses the text → timestamp casts, which are STABLE, so a
 * window bound built from a parameter was only known at executor start-up: the planner planned
 * and locked every partition, and pruned them only then (planning 7 ms at 44 partitions
 * against 0.2 ms; BENCHMARKS.md). The result depends only on the text: a zone in the text, or
 * UTC. (The casts are STABLE because of the session TimeZone, which neither branch uses, and of
 * 'now'/'today', which name the transaction's time, the same at plan and at run time: queries
 * run as unnamed statements, planned in the transaction that runs them.)
 *
 * The regular expression is the translator's HAS_ZONE (src/sql/coerce.ts); test/sql/timezone.test.ts
 * checks both give the same instant for the same strings.
 */
export const up = (pgm) => {
  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.bq_timestamp(value text) RETURNS timestamptz
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE WHEN value ~ '(:[0-9]{2}(\\.[0-9]*)? *([zZ]|[+-][0-9:]+)|[A-Za-z]) *$'
                        THEN value::timestamptz
                        ELSE timezone('UTC', value::timestamp) END $$`);
};

export const down = (pgm) => {
  pgm.sql('DROP FUNCTION IF EXISTS logs.bq_timestamp(text)');
};
