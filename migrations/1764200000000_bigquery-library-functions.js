/**
 * SQL functions for BigQuery functions that Postgres has no single function or expression for,
 * with BigQuery's semantics (docs/COMPATIBILITY.md, "Dates, JSON, arrays and aggregates"). The
 * translator prints them (src/sql/library/*.ts); wall 2 allows them through the function catalogue,
 * whose facts test/sql/pg-functions.test.ts checks against pg_proc. Plain SQL (plus one plpgsql
 * body), so they also run on PGlite. None reads the session: IMMUTABLE, PARALLEL SAFE.
 *
 * - `bq_json_text(jsonb)`: JSON as BigQuery renders it, compact (`{"a":1,"b":[1,2]}`), where
 *   jsonb's text has a space after every `:` and `,`. Objects keep jsonb's key order.
 * - `bq_json_array(jsonb)` / `bq_json_scalar_array(jsonb)`: JSON_QUERY_ARRAY / JSON_VALUE_ARRAY,
 *   NULL for anything but an array (and, for the scalar one, an array holding an object or array).
 * - `bq_top_count(jsonb, bigint)` / `bq_top_sum(jsonb, bigint)`: APPROX_TOP_COUNT / APPROX_TOP_SUM
 *   computed exactly over the group's values (a jsonb array of values, of `[value, weight]` pairs).
 * - `bq_percentile_cont(float8[], float8)` / `bq_percentile_disc(anyarray, float8)`: the window
 *   functions PERCENTILE_CONT / PERCENTILE_DISC over the partition's values (Postgres has them only
 *   as ordered-set aggregates, which take no OVER); NULLs are ignored, as by default in BigQuery.
 * - `bq_generate_array`, `bq_date_array`, `bq_timestamp_array`: GENERATE_*_ARRAY as arrays
 *   (wall 2 allows no set-returning function in expressions). Timestamps step by a number of
 *   seconds, so a DAY is 24 hours whatever the session's zone, as in BigQuery (UTC). At most
 *   100,000 elements (`bq_array_size_check`).
 * - `bq_array_reverse(anyarray)`, `bq_array_offset(anyarray, bigint)`: ARRAY_REVERSE, and
 *   `arr[OFFSET(i)]` that fails out of range as BigQuery does.
 * - `bq_array_slice`, `bq_array_max` / `_min` / `_sum` / `_avg`, `bq_array_is_distinct`,
 *   `bq_array_includes_all` / `_any`: the ARRAY_* functions of those names; the aggregates skip
 *   NULL elements and answer NULL for an empty array, ARRAY_IS_DISTINCT counts NULLs as one value.
 */
export const up = (pgm) => {
  pgm.sql(`
    -- GENERATE_*_ARRAY: a zero step fails as in BigQuery, and so does an array of more than 100,000
    -- elements (a query must not build arrays of any size; the translator refuses literal ones first).
    CREATE OR REPLACE FUNCTION logs.bq_array_size_check(steps numeric, zero_step boolean) RETURNS void
      LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
      AS $$ BEGIN
        IF zero_step THEN RAISE EXCEPTION 'the step of a generated array cannot be 0' USING ERRCODE = '22023'; END IF;
        IF steps >= 100000 THEN RAISE EXCEPTION 'a generated array may hold at most 100000 elements' USING ERRCODE = '54000'; END IF;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_json_text(value jsonb) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE jsonb_typeof(value)
        WHEN 'object' THEN '{' || coalesce((SELECT string_agg(to_jsonb(e.key)::text || ':' || logs.bq_json_text(e.value), ',' ORDER BY e.n)
                                            FROM jsonb_each(value) WITH ORDINALITY AS e(key, value, n)), '') || '}'
        WHEN 'array' THEN '[' || coalesce((SELECT string_agg(logs.bq_json_text(e.value), ',' ORDER BY e.n)
                                           FROM jsonb_array_elements(value) WITH ORDINALITY AS e(value, n)), '') || ']'
        ELSE value::text END $$;

    CREATE OR REPLACE FUNCTION logs.bq_json_array(value jsonb) RETURNS text[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE WHEN jsonb_typeof(value) = 'array' THEN
        coalesce((SELECT array_agg(logs.bq_json_text(e.value) ORDER BY e.n) FROM jsonb_array_elements(value) WITH ORDINALITY AS e(value, n)), '{}')
        END $$;

    CREATE OR REPLACE FUNCTION logs.bq_json_scalar_array(value jsonb) RETURNS text[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE WHEN jsonb_typeof(value) = 'array'
                         AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(value) e WHERE jsonb_typeof(e) IN ('object', 'array')) THEN
        coalesce((SELECT array_agg(e.value #>> '{}' ORDER BY e.n) FROM jsonb_array_elements(value) WITH ORDINALITY AS e(value, n)), '{}')
        END $$;

    CREATE OR REPLACE FUNCTION logs.bq_top_count(vals jsonb, n bigint) RETURNS jsonb
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT jsonb_agg(jsonb_build_object('value', t.v, 'count', t.c) ORDER BY t.c DESC, t.v)
            FROM (SELECT e.v, count(*) AS c FROM jsonb_array_elements(vals) AS e(v) GROUP BY e.v ORDER BY count(*) DESC, e.v LIMIT n) t $$;

    CREATE OR REPLACE FUNCTION logs.bq_top_sum(pairs jsonb, n bigint) RETURNS jsonb
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT jsonb_agg(jsonb_build_object('value', t.v, 'sum', t.s) ORDER BY t.s DESC NULLS LAST, t.v)
            FROM (SELECT e.p -> 0 AS v, sum((e.p ->> 1)::numeric) AS s FROM jsonb_array_elements(pairs) AS e(p)
                  GROUP BY e.p -> 0 ORDER BY 2 DESC NULLS LAST, 1 LIMIT n) t $$;

    CREATE OR REPLACE FUNCTION logs.bq_percentile_cont(vals float8[], fraction float8) RETURNS float8
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT percentile_cont(fraction) WITHIN GROUP (ORDER BY v) FROM unnest(vals) AS v $$;

    CREATE OR REPLACE FUNCTION logs.bq_percentile_disc(vals anyarray, fraction float8) RETURNS anyelement
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT percentile_disc(fraction) WITHIN GROUP (ORDER BY v) FROM unnest(vals) AS v $$;

    CREATE OR REPLACE FUNCTION logs.bq_generate_array(first bigint, last bigint, step bigint) RETURNS bigint[]
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        PERFORM logs.bq_array_size_check((last::numeric - first) / nullif(step, 0), step = 0);
        RETURN coalesce((SELECT array_agg(v ORDER BY n) FROM generate_series(first, last, step) WITH ORDINALITY AS g(v, n)), '{}');
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_generate_array(first float8, last float8, step float8) RETURNS float8[]
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        PERFORM logs.bq_array_size_check((last::numeric - first::numeric) / nullif(step::numeric, 0), step = 0);
        RETURN coalesce((SELECT array_agg(v::float8 ORDER BY n)
                         FROM generate_series(first::numeric, last::numeric, step::numeric) WITH ORDINALITY AS g(v, n)), '{}');
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_date_array(first date, last date, step interval) RETURNS date[]
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        -- A month counts as 30 days here: the check bounds the size, generate_series makes the dates.
        PERFORM logs.bq_array_size_check((last - first)::numeric * 86400 / nullif(extract(epoch FROM step), 0), extract(epoch FROM step) = 0);
        RETURN coalesce((SELECT array_agg(v::date ORDER BY n)
                         FROM generate_series(first::timestamp, last::timestamp, step) WITH ORDINALITY AS g(v, n)), '{}');
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_timestamp_array(first timestamptz, last timestamptz, step interval) RETURNS timestamptz[]
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ DECLARE seconds numeric := extract(epoch FROM step);
      BEGIN
        PERFORM logs.bq_array_size_check((extract(epoch FROM last) - extract(epoch FROM first)) / nullif(seconds, 0), seconds = 0);
        RETURN coalesce((SELECT array_agg(first + (i * seconds) * interval '1 second' ORDER BY i)
                         FROM generate_series(0, floor((extract(epoch FROM last) - extract(epoch FROM first)) / seconds)::bigint) AS i), '{}');
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_array_reverse(vals anyarray) RETURNS anyarray
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT coalesce((SELECT array_agg(v ORDER BY n DESC) FROM unnest(vals) WITH ORDINALITY AS u(v, n)), vals[1:0]) $$;

    CREATE OR REPLACE FUNCTION logs.bq_array_slice(vals anyarray, first bigint, last bigint) RETURNS anyarray
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE WHEN f > l THEN vals[1:0] ELSE coalesce(vals[f + 1:l + 1], vals[1:0]) END
            FROM (SELECT greatest(CASE WHEN first < 0 THEN first + cardinality(vals) ELSE first END, 0) AS f,
                         CASE WHEN last < 0 THEN last + cardinality(vals) ELSE last END AS l) b $$;

    CREATE OR REPLACE FUNCTION logs.bq_array_max(vals anyarray) RETURNS anyelement
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT max(v) FROM unnest(vals) AS v $$;

    CREATE OR REPLACE FUNCTION logs.bq_array_min(vals anyarray) RETURNS anyelement
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT min(v) FROM unnest(vals) AS v $$;

    CREATE OR REPLACE FUNCTION logs.bq_array_sum(vals bigint[]) RETURNS bigint
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT sum(v)::bigint FROM unnest(vals) AS v $$;

    CREATE OR REPLACE FUNCTION logs.bq_array_sum(vals float8[]) RETURNS float8
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT sum(v) FROM unnest(vals) AS v $$;

    CREATE OR REPLACE FUNCTION logs.bq_array_avg(vals float8[]) RETURNS float8
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT avg(v) FROM unnest(vals) AS v $$;

    CREATE OR REPLACE FUNCTION logs.bq_array_is_distinct(vals anyarray) RETURNS boolean
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT count(DISTINCT v) + least(count(*) - count(v), 1) = count(*) FROM unnest(vals) AS v $$;

    CREATE OR REPLACE FUNCTION logs.bq_array_includes_all(vals anyarray, search anyarray) RETURNS boolean
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT vals @> search $$;

    CREATE OR REPLACE FUNCTION logs.bq_array_includes_any(vals anyarray, search anyarray) RETURNS boolean
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT vals && search $$;

    CREATE OR REPLACE FUNCTION logs.bq_array_offset(vals anyarray, i bigint) RETURNS anyelement
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        IF i < 0 OR i >= coalesce(cardinality(vals), 0) THEN
          RAISE EXCEPTION 'array index % is out of bounds (array length %)', i, cardinality(vals) USING ERRCODE = '2202E';
        END IF;
        RETURN vals[i + 1];
      END $$;
  `);
};

export const down = (pgm) => {
  pgm.sql(`
    DROP FUNCTION IF EXISTS logs.bq_array_offset(anyarray, bigint);
    DROP FUNCTION IF EXISTS logs.bq_array_includes_any(anyarray, anyarray);
    DROP FUNCTION IF EXISTS logs.bq_array_includes_all(anyarray, anyarray);
    DROP FUNCTION IF EXISTS logs.bq_array_is_distinct(anyarray);
    DROP FUNCTION IF EXISTS logs.bq_array_avg(float8[]);
    DROP FUNCTION IF EXISTS logs.bq_array_sum(float8[]);
    DROP FUNCTION IF EXISTS logs.bq_array_sum(bigint[]);
    DROP FUNCTION IF EXISTS logs.bq_array_min(anyarray);
    DROP FUNCTION IF EXISTS logs.bq_array_max(anyarray);
    DROP FUNCTION IF EXISTS logs.bq_array_slice(anyarray, bigint, bigint);
    DROP FUNCTION IF EXISTS logs.bq_array_reverse(anyarray);
    DROP FUNCTION IF EXISTS logs.bq_timestamp_array(timestamptz, timestamptz, interval);
    DROP FUNCTION IF EXISTS logs.bq_date_array(date, date, interval);
    DROP FUNCTION IF EXISTS logs.bq_generate_array(float8, float8, float8);
    DROP FUNCTION IF EXISTS logs.bq_generate_array(bigint, bigint, bigint);
    DROP FUNCTION IF EXISTS logs.bq_percentile_disc(anyarray, float8);
    DROP FUNCTION IF EXISTS logs.bq_percentile_cont(float8[], float8);
    DROP FUNCTION IF EXISTS logs.bq_top_sum(jsonb, bigint);
    DROP FUNCTION IF EXISTS logs.bq_top_count(jsonb, bigint);
    DROP FUNCTION IF EXISTS logs.bq_json_scalar_array(jsonb);
    DROP FUNCTION IF EXISTS logs.bq_json_array(jsonb);
    DROP FUNCTION IF EXISTS logs.bq_json_text(jsonb);
    DROP FUNCTION IF EXISTS logs.bq_array_size_check(numeric, boolean);
  `);
};
