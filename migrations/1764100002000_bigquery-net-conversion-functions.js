/**
 * BigQuery functions without a Postgres counterpart (src/sql/library/net.ts, conversion.ts,
 * strings.ts). IMMUTABLE, STRICT and PARALLEL SAFE; they run on PGlite too.
 *
 * - `bq_net_host(url)`: NET.HOST's best-effort parse: surrounding whitespace trimmed, the scheme
 *   (`http://`, `//`), user information (`user:pw@`), port, path, query and fragment removed; an
 *   IPv6 host keeps its brackets; NULL when nothing is left. No normalisation (case is kept).
 * - `bq_parse_numeric(text, scale, max)`: PARSE_NUMERIC / PARSE_BIGNUMERIC's rules: whitespace
 *   around and between the sign and the number, the sign before or after it (not both), commas in
 *   the whole part (which must start with a digit), an exponent; rounded half away from zero to
 *   `scale` digits; beyond `max` or malformed, BigQuery's error.
 * - `bq_soundex(text)`: the American Soundex code (letter and three digits) of the Latin letters.
 */
export const up = (pgm) => {
  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.bq_net_host(url text) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT nullif(substring(
        regexp_replace(
          substring(regexp_replace(regexp_replace(url, '^\\s+|\\s+$', '', 'g'), '^[A-Za-z][A-Za-z0-9+.-]*://|^//', '') FROM '^[^/?#]*'),
          '^.*@', ''),
        '^(\\[[^]]*\\]|[^:]*)'), '') $$;

    CREATE OR REPLACE FUNCTION logs.bq_parse_numeric(v text, scale integer, max numeric) RETURNS numeric
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        m text[] := regexp_match(v, '^\\s*([+-]?)\\s*([0-9][0-9,]*)?(\\.[0-9]*)?([eE][+-]?[0-9]+)?\\s*([+-]?)\\s*$');
        n numeric;
      BEGIN
        IF m IS NULL OR (m[2] IS NULL AND coalesce(m[3], '.') = '.') OR (m[1] <> '' AND m[5] <> '') THEN
          RAISE EXCEPTION 'invalid NUMERIC value: %', v USING ERRCODE = '22P02';
        END IF;
        n := round((m[1] || m[5] || coalesce(replace(m[2], ',', ''), '0') || coalesce(nullif(m[3], '.'), '') || coalesce(m[4], ''))::numeric, scale);
        IF abs(n) >= max THEN RAISE EXCEPTION 'NUMERIC value out of range: %', v USING ERRCODE = '22003'; END IF;
        RETURN n;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_soundex(v text) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        c text;
        code text;
        out text := '';
        last text := '';
      BEGIN
        FOREACH c IN ARRAY regexp_split_to_array(upper(v), '') LOOP
          CONTINUE WHEN c !~ '^[A-Z]$';
          code := CASE
            WHEN c IN ('B', 'F', 'P', 'V') THEN '1'
            WHEN c IN ('C', 'G', 'J', 'K', 'Q', 'S', 'X', 'Z') THEN '2'
            WHEN c IN ('D', 'T') THEN '3'
            WHEN c = 'L' THEN '4'
            WHEN c IN ('M', 'N') THEN '5'
            WHEN c = 'R' THEN '6'
            WHEN c IN ('H', 'W') THEN NULL
            ELSE '' END;
          IF out = '' THEN
            out := c;
            last := coalesce(code, '');
          ELSIF code IS NULL THEN
            CONTINUE; -- H and W do not separate letters of one code
          ELSIF code = '' THEN
            last := ''; -- vowels do
          ELSIF code <> last THEN
            out := out || code;
            last := code;
          END IF;
          EXIT WHEN length(out) = 4;
        END LOOP;
        RETURN CASE WHEN out = '' THEN '' ELSE rpad(out, 4, '0') END;
      END $$;
  `);
};

export const down = (pgm) => {
  pgm.sql('DROP FUNCTION IF EXISTS logs.bq_net_host(text)');
  pgm.sql('DROP FUNCTION IF EXISTS logs.bq_parse_numeric(text, integer, numeric)');
  pgm.sql('DROP FUNCTION IF EXISTS logs.bq_soundex(text)');
};
