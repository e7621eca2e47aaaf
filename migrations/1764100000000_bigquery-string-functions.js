/**
 * BigQuery's string and conversion functions where Postgres has no function with the same answers
 * (src/sql/library/strings.ts, conversion.ts). Each is IMMUTABLE and PARALLEL SAFE (the result
 * depends only on the arguments), plain SQL where it can be and plpgsql where it raises BigQuery's
 * errors or loops; all run on PGlite too (test/db/embedded.test.ts migrates it).
 *
 * - `bq_substr`: 1-based positions, a negative one counting from the end, 0 read as 1
 *   (`SUBSTR('apple', -2)` is `le`); a negative length is an error, as in BigQuery.
 * - `bq_split`: `SPLIT('', ' ')` is `['']`, and an empty delimiter splits into characters
 *   (Postgres' string_to_array answers `{}` and the whole string).
 * - `bq_length_arg`: a length or count argument (LPAD, REPEAT, LEFT…) as Postgres' integer;
 *   negative is BigQuery's error (Postgres would answer '' or drop characters);
 *   `bq_length_or_null` is the same for their `SAFE.` forms, NULL where the other raises.
 * - `bq_repeat`, `bq_pad` (LPAD / RPAD): results over 1 MiB characters are refused, so that one
 *   call cannot exhaust the server's memory (sandboxed callers may write them).
 * - `bq_instr`: positions and occurrences as BigQuery counts them, a negative position searching
 *   backwards from the end.
 * - `bq_regexp_extract_all`: every match, or its capturing group (regexp_matches returns rows).
 * - `bq_chr`, `bq_to_code_points`, `bq_code_points_to_string`: code points; CHR(0) is ''.
 * - `bq_initcap`: words split at BigQuery's delimiters only (Postgres' initcap splits at every
 *   non-alphanumeric character: `don't` → `Don'T`).
 * - `bq_edit_distance`: Levenshtein distance over characters, capped at `max` when given.
 * - `bq_normalize`: normalize() takes its form as a keyword; this takes it as text.
 * - `bq_int64`: CAST(STRING AS INT64) with BigQuery's hexadecimal form (`'0x123'` is 291).
 * - `bq_safe_*`: SAFE_CAST from STRING: NULL for text that does not convert (`'2020-13-45'` as a
 *   DATE), where the cast raises. Only data exceptions (class 22) become NULL.
 */
export const up = (pgm) => {
  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.bq_length_arg(n bigint) RETURNS integer
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        IF n < 0 THEN RAISE EXCEPTION 'negative length % is not allowed', n USING ERRCODE = '22023'; END IF;
        RETURN least(n, 2147483647)::integer;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_length_or_null(n bigint) RETURNS integer
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE WHEN n >= 0 THEN least(n, 2147483647)::integer END $$;

    CREATE OR REPLACE FUNCTION logs.bq_repeat(v text, n bigint) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        IF length(v) * logs.bq_length_arg(n)::bigint > 1048576 THEN
          RAISE EXCEPTION 'REPEAT: a result longer than 1048576 characters is not allowed' USING ERRCODE = '54000';
        END IF;
        RETURN repeat(v, n::integer);
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_pad(v text, n bigint, p text, at_start boolean) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        IF logs.bq_length_arg(n) > 1048576 THEN
          RAISE EXCEPTION 'LPAD / RPAD: a result longer than 1048576 characters is not allowed' USING ERRCODE = '54000';
        END IF;
        IF p = '' AND n > length(v) THEN RAISE EXCEPTION 'LPAD / RPAD: the pattern is empty' USING ERRCODE = '22023'; END IF;
        RETURN CASE WHEN at_start THEN lpad(v, n::integer, p) ELSE rpad(v, n::integer, p) END;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_substr(v text, p bigint) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT substr(v, (CASE WHEN p > 0 THEN least(p, length(v) + 1) WHEN p = 0 THEN 1 ELSE greatest(length(v) + p + 1, 1) END)::integer) $$;

    CREATE OR REPLACE FUNCTION logs.bq_substr(v text, p bigint, n bigint) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT substr(logs.bq_substr(v, p), 1, logs.bq_length_arg(n)) $$;

    CREATE OR REPLACE FUNCTION logs.bq_split(v text, d text) RETURNS text[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE WHEN v = '' THEN ARRAY[''] WHEN d = '' THEN regexp_split_to_array(v, '') ELSE string_to_array(v, d) END $$;

    CREATE OR REPLACE FUNCTION logs.bq_instr(v text, s text, p bigint, o bigint) RETURNS bigint
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        n integer := length(v);
        m integer := length(s);
        found bigint := 0;
        i integer;
      BEGIN
        IF p = 0 THEN RAISE EXCEPTION 'INSTR: position must not be 0' USING ERRCODE = '22023'; END IF;
        IF o < 1 THEN RAISE EXCEPTION 'INSTR: occurrence must be positive' USING ERRCODE = '22023'; END IF;
        IF p > 0 THEN
          i := least(p, n + 2);
          WHILE i + m - 1 <= n LOOP
            IF substr(v, i, m) = s THEN
              found := found + 1;
              IF found = o THEN RETURN i; END IF;
            END IF;
            i := i + 1;
          END LOOP;
        ELSE
          i := least(n + p + 1, n - m + 1);
          WHILE i >= 1 LOOP
            IF substr(v, i, m) = s THEN
              found := found + 1;
              IF found = o THEN RETURN i; END IF;
            END IF;
            i := i - 1;
          END LOOP;
        END IF;
        RETURN 0;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_regexp_extract_all(v text, re text) RETURNS text[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT coalesce(array_agg(m[1] ORDER BY n), '{}') FROM regexp_matches(v, re, 'g') WITH ORDINALITY AS t(m, n) $$;

    CREATE OR REPLACE FUNCTION logs.bq_chr(c bigint) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE WHEN c = 0 THEN '' ELSE chr(c::integer) END $$;

    CREATE OR REPLACE FUNCTION logs.bq_to_code_points(v text) RETURNS bigint[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT coalesce(array_agg(ascii(c)::bigint ORDER BY n), '{}') FROM regexp_split_to_table(v, '') WITH ORDINALITY AS t(c, n) $$;

    CREATE OR REPLACE FUNCTION logs.bq_code_points_to_string(a bigint[]) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE WHEN bool_or(c IS NULL) THEN NULL ELSE coalesce(string_agg(logs.bq_chr(c), '' ORDER BY n), '') END FROM unnest(a) WITH ORDINALITY AS t(c, n) $$;

    CREATE OR REPLACE FUNCTION logs.bq_initcap(v text, delimiters text) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        out text := '';
        c text;
        word_start boolean := true;
      BEGIN
        FOREACH c IN ARRAY regexp_split_to_array(v, '') LOOP
          IF strpos(delimiters, c) > 0 THEN
            out := out || c;
            word_start := true;
          ELSIF word_start THEN
            out := out || upper(c);
            word_start := false;
          ELSE
            out := out || lower(c);
          END IF;
        END LOOP;
        RETURN out;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_edit_distance(a text, b text, cap bigint) RETURNS bigint
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        x text[] := regexp_split_to_array(a, '');
        y text[] := regexp_split_to_array(b, '');
        prev integer[];
        cur integer[];
        i integer;
        j integer;
      BEGIN
        IF cap < 0 THEN RAISE EXCEPTION 'EDIT_DISTANCE: max_distance must be non-negative' USING ERRCODE = '22023'; END IF;
        IF a = '' THEN RETURN least(length(b), cap); END IF;
        IF b = '' THEN RETURN least(length(a), cap); END IF;
        prev := ARRAY(SELECT generate_series(0, cardinality(y)));
        FOR i IN 1 .. cardinality(x) LOOP
          cur := ARRAY[i];
          FOR j IN 1 .. cardinality(y) LOOP
            cur := cur || least(prev[j + 1] + 1, cur[j] + 1, prev[j] + CASE WHEN x[i] = y[j] THEN 0 ELSE 1 END);
          END LOOP;
          prev := cur;
        END LOOP;
        RETURN least(prev[cardinality(y) + 1], cap);
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_normalize(v text, form text) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE form WHEN 'NFC' THEN normalize(v, NFC) WHEN 'NFD' THEN normalize(v, NFD) WHEN 'NFKC' THEN normalize(v, NFKC) ELSE normalize(v, NFKD) END $$;

    CREATE OR REPLACE FUNCTION logs.bq_int64(v text) RETURNS bigint
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE
        WHEN v ~* '^\\s*[+-]?0x[0-9a-f]{1,16}\\s*$' THEN
          (CASE WHEN btrim(v) LIKE '-%' THEN -1 ELSE 1 END) *
          ('x' || lpad(substring(v FROM '(?i)0x([0-9a-f]+)'), 16, '0'))::bit(64)::bigint
        ELSE v::bigint END $$;

    CREATE OR REPLACE FUNCTION logs.bq_safe_int64(v text) RETURNS bigint
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN RETURN logs.bq_int64(v); EXCEPTION WHEN data_exception THEN RETURN NULL; END $$;

    CREATE OR REPLACE FUNCTION logs.bq_safe_float64(v text) RETURNS double precision
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN RETURN v::double precision; EXCEPTION WHEN data_exception THEN RETURN NULL; END $$;

    CREATE OR REPLACE FUNCTION logs.bq_safe_numeric(v text) RETURNS numeric
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN RETURN v::numeric; EXCEPTION WHEN data_exception THEN RETURN NULL; END $$;

    CREATE OR REPLACE FUNCTION logs.bq_safe_date(v text) RETURNS date
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN RETURN v::date; EXCEPTION WHEN data_exception THEN RETURN NULL; END $$;

    CREATE OR REPLACE FUNCTION logs.bq_safe_datetime(v text) RETURNS timestamp
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN RETURN v::timestamp; EXCEPTION WHEN data_exception THEN RETURN NULL; END $$;

    CREATE OR REPLACE FUNCTION logs.bq_safe_timestamp(v text) RETURNS timestamptz
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN RETURN logs.bq_timestamp(v); EXCEPTION WHEN data_exception THEN RETURN NULL; END $$;
  `);
};

export const down = (pgm) => {
  for (const signature of [
    'bq_length_arg(bigint)',
    'bq_length_or_null(bigint)',
    'bq_repeat(text, bigint)',
    'bq_pad(text, bigint, text, boolean)',
    'bq_substr(text, bigint)',
    'bq_substr(text, bigint, bigint)',
    'bq_split(text, text)',
    'bq_instr(text, text, bigint, bigint)',
    'bq_regexp_extract_all(text, text)',
    'bq_chr(bigint)',
    'bq_to_code_points(text)',
    'bq_code_points_to_string(bigint[])',
    'bq_initcap(text, text)',
    'bq_edit_distance(text, text, bigint)',
    'bq_normalize(text, text)',
    'bq_int64(text)',
    'bq_safe_int64(text)',
    'bq_safe_float64(text)',
    'bq_safe_numeric(text)',
    'bq_safe_date(text)',
    'bq_safe_datetime(text)',
    'bq_safe_timestamp(text)',
  ])
    pgm.sql(`DROP FUNCTION IF EXISTS logs.${signature}`);
};
