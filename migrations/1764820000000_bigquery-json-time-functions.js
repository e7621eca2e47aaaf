/**
 * BigQuery's JSON type and STRING(timestamp, zone) (src/sql/library/json.ts, datetime.ts): what
 * Postgres has no function for. IMMUTABLE and PARALLEL SAFE; they run on PGlite too.
 *
 * A BigQuery JSON value is held by the translator as its text, rendered here by
 * `bq_json_render(jsonb)`: compact, object keys in byte order (BigQuery's JSON type keeps them
 * sorted: `JSON_OBJECT('foo', 10, 'bar', TRUE)` is `{"bar":true,"foo":10}`), numbers as BigQuery
 * holds them (an integer of the INT64 / UINT64 domain as digits, any other number as the nearest
 * FLOAT64: `1e100` is `1e+100`, `10.0` is `10`).
 *
 * - `bq_parse_json(text, exact)`: PARSE_JSON; invalid JSON fails, and with `exact` (BigQuery's
 *   default `wide_number_mode`) so does a number no INT64, UINT64 or FLOAT64 holds exactly.
 * - `bq_json_bool` / `_int64` / `_float64` / `_string(jsonb, safe)`: BOOL, INT64, FLOAT64, STRING of
 *   JSON: the value of that JSON type, else BigQuery's error (NULL when `safe`, the SAFE. form).
 * - `bq_lax_bool` / `_int64` / `_float64` / `_string(jsonb)`: the LAX_ conversions (NULL when none).
 * - `bq_json_object(text[], jsonb)`: JSON_OBJECT of a key array and a value array (a jsonb array);
 *   the first of two equal keys wins; NULL arrays, NULL keys and different lengths fail.
 * - `bq_json_edit(doc, path, op, value, flag, flag2)`: JSON_SET (`set`, flag: create_if_missing),
 *   JSON_REMOVE (`remove`), JSON_ARRAY_APPEND (`append`), JSON_ARRAY_INSERT (`insert`; flag: the
 *   value is a SQL array whose elements go one by one) and JSON_STRIP_NULLS (`strip`; flag:
 *   include_arrays, flag2: remove_empty) at one path. A path is a text array of elements `$`, `.key`
 *   and `[index`; an operation whose path does not fit the document is ignored, as BigQuery does.
 * - `bq_json_stringify_wide(jsonb, flag)`: TO_JSON's stringify_wide_numbers.
 * - `bq_json_keys(jsonb, max_depth, mode)`: JSON_KEYS: the unique dotted key paths, sorted.
 * - `bq_timestamp_string(timestamptz, zone)`: STRING(timestamp, zone): `2008-12-25 07:30:00-08`.
 */
export const up = (pgm) => {
  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.bq_json_number(n numeric) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE WHEN n = trunc(n) AND n >= -9223372036854775808 AND n <= 18446744073709551615 THEN trunc(n)::text
                        ELSE n::float8::text END $$;

    -- plpgsql, not SQL: a recursive SQL function plans its query again at every level of every
    -- call (a nested record took ~10 ms); plpgsql keeps one plan per session.
    CREATE OR REPLACE FUNCTION logs.bq_json_render(value jsonb) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE out text;
      BEGIN
        CASE jsonb_typeof(value)
          WHEN 'object' THEN
            SELECT string_agg(to_jsonb(e.key)::text || ':' || logs.bq_json_render(e.value), ',' ORDER BY e.key COLLATE "C") INTO out
            FROM jsonb_each(value) AS e(key, value);
            RETURN '{' || coalesce(out, '') || '}';
          WHEN 'array' THEN
            SELECT string_agg(logs.bq_json_render(e.value), ',' ORDER BY e.n) INTO out
            FROM jsonb_array_elements(value) WITH ORDINALITY AS e(value, n);
            RETURN '[' || coalesce(out, '') || ']';
          WHEN 'number' THEN RETURN logs.bq_json_number(value::numeric);
          ELSE RETURN value::text;
        END CASE;
      END $$;

    -- A number that no INT64, UINT64 or FLOAT64 holds exactly (float8's text is its shortest exact form).
    CREATE OR REPLACE FUNCTION logs.bq_json_lossy(n numeric) RETURNS boolean
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT NOT ((n = trunc(n) AND n >= -9223372036854775808 AND n <= 18446744073709551615)
                        OR (abs(n) < 1e308 AND n::float8::text::numeric = n)) $$;

    CREATE OR REPLACE FUNCTION logs.bq_parse_json(s text, exact boolean) RETURNS jsonb
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE v jsonb := s::jsonb;
      BEGIN
        IF exact AND EXISTS (SELECT 1 FROM jsonb_path_query(v, 'strict $.**') AS x(n)
                             WHERE jsonb_typeof(x.n) = 'number' AND logs.bq_json_lossy(x.n::numeric)) THEN
          RAISE EXCEPTION 'PARSE_JSON: a number of the JSON text cannot be held without loss of precision; use wide_number_mode=>''round''' USING ERRCODE = '22003';
        END IF;
        RETURN v;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_json_fail(want text, v jsonb) RETURNS void
      LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
      AS $$ BEGIN
        RAISE EXCEPTION 'the JSON value % is not %', left(v::text, 100), want USING ERRCODE = '22023';
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_json_bool(v jsonb, safe boolean) RETURNS boolean
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        IF jsonb_typeof(v) = 'boolean' THEN RETURN v::boolean; END IF;
        IF NOT safe THEN PERFORM logs.bq_json_fail('a boolean', v); END IF;
        RETURN NULL;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_json_int64(v jsonb, safe boolean) RETURNS bigint
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        IF jsonb_typeof(v) = 'number' AND v::numeric = trunc(v::numeric)
           AND v::numeric BETWEEN -9223372036854775808 AND 9223372036854775807 THEN
          RETURN v::numeric::bigint;
        END IF;
        IF NOT safe THEN PERFORM logs.bq_json_fail('a number of the INT64 domain', v); END IF;
        RETURN NULL;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_json_float64(v jsonb, exact boolean, safe boolean) RETURNS float8
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        IF jsonb_typeof(v) = 'number' AND abs(v::numeric) < 1e308 AND NOT (exact AND v::numeric::float8::text::numeric <> v::numeric) THEN
          RETURN v::numeric::float8;
        END IF;
        IF NOT safe THEN PERFORM logs.bq_json_fail(CASE WHEN exact THEN 'a number FLOAT64 holds exactly' ELSE 'a number' END, v); END IF;
        RETURN NULL;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_json_string(v jsonb, safe boolean) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        IF jsonb_typeof(v) = 'string' THEN RETURN v #>> '{}'; END IF;
        IF NOT safe THEN PERFORM logs.bq_json_fail('a string', v); END IF;
        RETURN NULL;
      END $$;

    -- LAX_*: a JSON string that spells a number is read as one (a sign allowed, as BigQuery does).
    -- An exponent of at most three digits always parses as numeric, so no error needs catching
    -- (a plpgsql EXCEPTION block would cost a subtransaction per call).
    CREATE OR REPLACE FUNCTION logs.bq_lax_number(v jsonb) RETURNS numeric
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE
        WHEN jsonb_typeof(v) = 'number' THEN v::numeric
        WHEN jsonb_typeof(v) = 'string' AND (v #>> '{}') ~ '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]{1,3})?$' THEN (v #>> '{}')::numeric END $$;

    CREATE OR REPLACE FUNCTION logs.bq_lax_bool(v jsonb) RETURNS boolean
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE jsonb_typeof(v)
        WHEN 'boolean' THEN v::boolean
        WHEN 'string' THEN CASE lower(v #>> '{}') WHEN 'true' THEN true WHEN 'false' THEN false END
        WHEN 'number' THEN v::numeric <> 0 END $$;

    CREATE OR REPLACE FUNCTION logs.bq_lax_int64(v jsonb) RETURNS bigint
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE WHEN jsonb_typeof(v) = 'boolean' THEN CASE WHEN v::boolean THEN 1 ELSE 0 END
                        ELSE (SELECT CASE WHEN r BETWEEN -9223372036854775808 AND 9223372036854775807 THEN r::bigint END
                              FROM (SELECT round(logs.bq_lax_number(v)) AS r) x) END $$;

    CREATE OR REPLACE FUNCTION logs.bq_lax_float64(v jsonb) RETURNS float8
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE
        WHEN jsonb_typeof(v) = 'string' AND lower(v #>> '{}') ~ '^[+-]?(nan|inf|infinity)$'
          THEN replace(lower(v #>> '{}'), 'infinity', 'inf')::float8
        ELSE (SELECT CASE WHEN abs(n) < 1e308 THEN n::float8 END FROM (SELECT logs.bq_lax_number(v) AS n) x) END $$;

    CREATE OR REPLACE FUNCTION logs.bq_lax_string(v jsonb) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE jsonb_typeof(v)
        WHEN 'string' THEN v #>> '{}'
        WHEN 'boolean' THEN v::text
        WHEN 'number' THEN logs.bq_json_number(v::numeric) END $$;

    CREATE OR REPLACE FUNCTION logs.bq_json_object(keys text[], vals jsonb) RETURNS jsonb
      LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
      AS $$
      DECLARE out jsonb := '{}'; i integer;
      BEGIN
        IF keys IS NULL OR vals IS NULL THEN RAISE EXCEPTION 'JSON_OBJECT: the keys and values arrays cannot be NULL' USING ERRCODE = '22004'; END IF;
        IF cardinality(keys) <> jsonb_array_length(vals) THEN
          RAISE EXCEPTION 'JSON_OBJECT: the number of keys and values must match' USING ERRCODE = '22023';
        END IF;
        FOR i IN 1 .. coalesce(cardinality(keys), 0) LOOP
          IF keys[i] IS NULL THEN RAISE EXCEPTION 'JSON_OBJECT: a key cannot be NULL' USING ERRCODE = '22004'; END IF;
          IF NOT out ? keys[i] THEN out := out || jsonb_build_object(keys[i], vals -> (i - 1)); END IF;
        END LOOP;
        RETURN out;
      END $$;

    -- OFFSET 0: without it the planner pulls the subquery up and computes the recursive call once
    -- per mention in WHERE, at every level (exponential in the depth: minutes for a log record).
    CREATE OR REPLACE FUNCTION logs.bq_json_strip(v jsonb, arrays boolean, empty boolean) RETURNS jsonb
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE out jsonb;
      BEGIN
        CASE jsonb_typeof(v)
          WHEN 'object' THEN
            SELECT jsonb_object_agg(e.key, e.value) INTO out
            FROM (SELECT k.key, logs.bq_json_strip(k.value, arrays, empty) AS value FROM jsonb_each(v) AS k OFFSET 0) e
            WHERE jsonb_typeof(e.value) <> 'null' AND NOT (empty AND (e.value = '{}'::jsonb OR (arrays AND e.value = '[]'::jsonb)));
            RETURN coalesce(out, '{}'::jsonb);
          WHEN 'array' THEN
            SELECT jsonb_agg(e.value ORDER BY e.n) INTO out
            FROM (SELECT k.n, logs.bq_json_strip(k.value, arrays, empty) AS value FROM jsonb_array_elements(v) WITH ORDINALITY AS k(value, n) OFFSET 0) e
            WHERE NOT arrays OR (jsonb_typeof(e.value) <> 'null' AND NOT (empty AND (e.value = '{}'::jsonb OR e.value = '[]'::jsonb)));
            RETURN coalesce(out, '[]'::jsonb);
          ELSE RETURN v;
        END CASE;
      END $$;

    -- TO_JSON(…, stringify_wide_numbers => TRUE): integers beyond ±2^53 (which a FLOAT64 cannot hold) as JSON strings.
    CREATE OR REPLACE FUNCTION logs.bq_json_stringify_wide(v jsonb, stringify boolean) RETURNS jsonb
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE out jsonb;
      BEGIN
        IF NOT stringify THEN RETURN v; END IF;
        CASE jsonb_typeof(v)
          WHEN 'object' THEN
            SELECT jsonb_object_agg(e.key, logs.bq_json_stringify_wide(e.value, true)) INTO out FROM jsonb_each(v) AS e;
            RETURN coalesce(out, '{}'::jsonb);
          WHEN 'array' THEN
            SELECT jsonb_agg(logs.bq_json_stringify_wide(e.value, true) ORDER BY e.n) INTO out FROM jsonb_array_elements(v) WITH ORDINALITY AS e(value, n);
            RETURN coalesce(out, '[]'::jsonb);
          WHEN 'number' THEN
            RETURN CASE WHEN v::numeric = trunc(v::numeric) AND abs(v::numeric) > 9007199254740992 THEN to_jsonb(v::text) ELSE v END;
          ELSE RETURN v;
        END CASE;
      END $$;

    -- The elements a value stands for when it is added to an array: its own when flag says it is a SQL array.
    CREATE OR REPLACE FUNCTION logs.bq_json_items(value jsonb, each boolean) RETURNS jsonb[]
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT CASE WHEN each AND jsonb_typeof(value) = 'array' THEN ARRAY(SELECT e FROM jsonb_array_elements(value) AS e)
                        ELSE ARRAY[coalesce(value, 'null'::jsonb)] END $$;

    CREATE OR REPLACE FUNCTION logs.bq_json_edit(doc jsonb, path text[], op text, value jsonb, flag boolean, flag2 boolean) RETURNS jsonb
      LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
      AS $$
      DECLARE
        head text := path[1];
        rest text[] := path[2:];
        idx integer;
        len integer;
        kind text := jsonb_typeof(doc);
        items jsonb[];
        elements jsonb[];
      BEGIN
        IF doc IS NULL THEN RETURN NULL; END IF;
        -- A path as written starts with its root, '$'.
        IF head = '$' THEN RETURN logs.bq_json_edit(doc, rest, op, value, flag, flag2); END IF;
        IF coalesce(cardinality(path), 0) = 0 THEN
          IF op = 'strip' THEN
            doc := logs.bq_json_strip(doc, flag, flag2);
            -- Nothing left: a JSON null.
            RETURN CASE WHEN flag2 AND doc IN ('{}'::jsonb, '[]'::jsonb) THEN 'null'::jsonb ELSE doc END;
          END IF;
          RETURN CASE op
            WHEN 'set' THEN coalesce(value, 'null'::jsonb)
            WHEN 'append' THEN CASE WHEN kind = 'array' THEN doc || to_jsonb(logs.bq_json_items(value, flag))
                                    WHEN kind = 'null' THEN to_jsonb(logs.bq_json_items(value, flag)) ELSE doc END
            ELSE doc END;
        END IF;
        IF head LIKE '[%' THEN
          idx := rtrim(substr(head, 2), ']')::integer;
          IF op = 'insert' AND cardinality(rest) = 0 THEN
            IF kind = 'null' THEN elements := '{}'; ELSIF kind = 'array' THEN elements := ARRAY(SELECT e FROM jsonb_array_elements(doc) AS e); ELSE RETURN doc; END IF;
            len := coalesce(cardinality(elements), 0);
            items := logs.bq_json_items(value, flag);
            IF idx >= len THEN
              RETURN to_jsonb(elements || array_fill('null'::jsonb, ARRAY[idx - len]) || items);
            END IF;
            RETURN to_jsonb(elements[1:idx] || items || elements[idx + 1:]);
          END IF;
          IF kind = 'array' THEN
            len := jsonb_array_length(doc);
            IF idx < len THEN
              IF op = 'remove' AND cardinality(rest) = 0 THEN RETURN doc - idx; END IF;
              RETURN jsonb_set(doc, ARRAY[idx::text], logs.bq_json_edit(doc -> idx, rest, op, value, flag, flag2));
            END IF;
            IF op = 'set' AND flag THEN
              RETURN doc || to_jsonb(array_fill('null'::jsonb, ARRAY[idx - len]))
                         || jsonb_build_array(logs.bq_json_edit('null'::jsonb, rest, op, value, flag, flag2));
            END IF;
          ELSIF kind = 'null' AND op = 'set' AND flag THEN
            RETURN to_jsonb(array_fill('null'::jsonb, ARRAY[idx])) || jsonb_build_array(logs.bq_json_edit('null'::jsonb, rest, op, value, flag, flag2));
          END IF;
          RETURN doc;
        END IF;
        head := substr(head, 2);
        IF kind = 'object' THEN
          IF doc ? head THEN
            IF op = 'remove' AND cardinality(rest) = 0 THEN RETURN doc - head; END IF;
            RETURN jsonb_set(doc, ARRAY[head], logs.bq_json_edit(doc -> head, rest, op, value, flag, flag2));
          END IF;
          IF op = 'set' AND flag THEN
            RETURN doc || jsonb_build_object(head, logs.bq_json_edit('null'::jsonb, rest, op, value, flag, flag2));
          END IF;
        ELSIF kind = 'null' AND op = 'set' AND flag THEN
          RETURN jsonb_build_object(head, logs.bq_json_edit('null'::jsonb, rest, op, value, flag, flag2));
        END IF;
        RETURN doc;
      END $$;

    -- JSON_KEYS: an object's keys (dotted below their parent) down to max_depth objects; arrays are
    -- looked into by 'lax' (one array level) and 'lax recursive' (any), not by 'strict'.
    CREATE OR REPLACE FUNCTION logs.bq_json_key_paths(v jsonb, prefix text, depth bigint, max_depth bigint, mode text, nested boolean) RETURNS text[]
      LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
      AS $$
      DECLARE out text[] := '{}'; k text; x jsonb; p text;
      BEGIN
        IF jsonb_typeof(v) = 'object' AND depth < max_depth THEN
          FOR k, x IN SELECT e.key, e.value FROM jsonb_each(v) AS e LOOP
            p := coalesce(prefix || '.', '') || k;
            out := out || p || logs.bq_json_key_paths(x, p, depth + 1, max_depth, mode, false);
          END LOOP;
        ELSIF jsonb_typeof(v) = 'array' AND (mode = 'lax recursive' OR (mode = 'lax' AND NOT nested)) THEN
          FOR x IN SELECT e FROM jsonb_array_elements(v) AS e LOOP
            out := out || logs.bq_json_key_paths(x, prefix, depth, max_depth, mode, true);
          END LOOP;
        END IF;
        RETURN out;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_json_keys(doc jsonb, max_depth bigint, mode text) RETURNS text[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT coalesce(array_agg(k ORDER BY k COLLATE "C"), '{}')
            FROM (SELECT DISTINCT unnest(logs.bq_json_key_paths(doc, NULL, 0, max_depth, mode, false)) AS k) x $$;

    -- plpgsql, not SQL: a SQL function with a FROM clause is not inlined and was planned again on every call (5 ms a row).
    CREATE OR REPLACE FUNCTION logs.bq_timestamp_string(ts timestamptz, zone text) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        wall timestamp := timezone(zone, ts);
        o integer := extract(epoch FROM wall - timezone('UTC', ts))::integer;
      BEGIN
        RETURN regexp_replace(to_char(wall, 'YYYY-MM-DD HH24:MI:SS.US'), '[.]?0+$', '')
               || CASE WHEN o < 0 THEN '-' ELSE '+' END || lpad((abs(o) / 3600)::text, 2, '0')
               || CASE WHEN abs(o) % 3600 <> 0 THEN ':' || lpad((abs(o) % 3600 / 60)::text, 2, '0') ELSE '' END;
      END $$;
  `);
};

export const down = (pgm) => {
  pgm.sql(`
    DROP FUNCTION IF EXISTS logs.bq_timestamp_string(timestamptz, text);
    DROP FUNCTION IF EXISTS logs.bq_json_keys(jsonb, bigint, text);
    DROP FUNCTION IF EXISTS logs.bq_json_key_paths(jsonb, text, bigint, bigint, text, boolean);
    DROP FUNCTION IF EXISTS logs.bq_json_edit(jsonb, text[], text, jsonb, boolean, boolean);
    DROP FUNCTION IF EXISTS logs.bq_json_items(jsonb, boolean);
    DROP FUNCTION IF EXISTS logs.bq_json_stringify_wide(jsonb, boolean);
    DROP FUNCTION IF EXISTS logs.bq_json_strip(jsonb, boolean, boolean);
    DROP FUNCTION IF EXISTS logs.bq_json_object(text[], jsonb);
    DROP FUNCTION IF EXISTS logs.bq_lax_string(jsonb);
    DROP FUNCTION IF EXISTS logs.bq_lax_float64(jsonb);
    DROP FUNCTION IF EXISTS logs.bq_lax_int64(jsonb);
    DROP FUNCTION IF EXISTS logs.bq_lax_bool(jsonb);
    DROP FUNCTION IF EXISTS logs.bq_lax_number(jsonb);
    DROP FUNCTION IF EXISTS logs.bq_json_string(jsonb, boolean);
    DROP FUNCTION IF EXISTS logs.bq_json_float64(jsonb, boolean, boolean);
    DROP FUNCTION IF EXISTS logs.bq_json_int64(jsonb, boolean);
    DROP FUNCTION IF EXISTS logs.bq_json_bool(jsonb, boolean);
    DROP FUNCTION IF EXISTS logs.bq_json_fail(text, jsonb);
    DROP FUNCTION IF EXISTS logs.bq_parse_json(text, boolean);
    DROP FUNCTION IF EXISTS logs.bq_json_lossy(numeric);
    DROP FUNCTION IF EXISTS logs.bq_json_render(jsonb);
    DROP FUNCTION IF EXISTS logs.bq_json_number(numeric);
  `);
};
