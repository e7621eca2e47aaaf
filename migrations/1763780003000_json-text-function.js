/**
 * `logs.bq_json(text)`: text read as JSON, or NULL when it is not JSON. BigQuery's JSON functions
 * (`JSON_VALUE(event_message, '$.a')`) answer NULL for text that does not parse; a plain
 * `text::jsonb` cast fails the whole query instead, and Postgres 15 has no non-throwing parse
 * (`pg_input_is_valid` is 16+). The translator prints it wherever a JSON function reads a STRING
 * (src/sql/functions.ts, jsonInput).
 *
 * Only data exceptions (class 22: the parse errors) become NULL; a cancel or the statement
 * timeout still ends the query. IMMUTABLE and PARALLEL SAFE: the result depends only on the text.
 */
export const up = (pgm) => {
  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.bq_json(value text) RETURNS jsonb
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN RETURN value::jsonb; EXCEPTION WHEN data_exception THEN RETURN NULL; END $$`);
};

export const down = (pgm) => {
  pgm.sql('DROP FUNCTION IF EXISTS logs.bq_json(text)');
};
