/**
 * SQL functions for BigQuery's RANGE type (docs/COMPATIBILITY.md, "RANGE"), which the translator
 * prints for RANGE<DATE> / RANGE<DATETIME> / RANGE<TIMESTAMP> held as Postgres `daterange` /
 * `tsrange` / `tstzrange` (src/sql/library/ranges.ts). Wall 2 allows them through the function
 * catalogue, whose facts test/sql/pg-functions.test.ts checks against pg_proc. Plain SQL and
 * PL/pgSQL, so they run on PGlite. None reads the session: IMMUTABLE.
 *
 * - `bq_range(lower, upper, safe)`: RANGE(lower, upper). A NULL bound is unbounded; a lower bound
 *   not before the upper one is BigQuery's error (Postgres would make an empty range of equal
 *   bounds), NULL under `SAFE.` (`safe`).
 * - `bq_parse_range(text, safe, kind)`: CAST(text AS RANGE<T>) of text that only the running query
 *   knows (a literal is read by the translator): `[lower, upper)` with one space after the comma,
 *   each bound `UNBOUNDED`, `NULL` or a literal of the element type in BigQuery's canonical form
 *   (Postgres would also read `today` or `Jan 1 2020`); a TIMESTAMP without a zone is UTC. The
 *   third argument, a typed NULL, picks the element type. `safe`: NULL instead of an error
 *   (SAFE_CAST); its EXCEPTION block makes it PARALLEL RESTRICTED
 *   (migrations/1764850000000_subtransaction-functions-parallel-restricted.js).
 * - `bq_range_intersect(a, b, safe)`: RANGE_INTERSECT, BigQuery's error for ranges that do not
 *   overlap (Postgres answers an empty range), NULL under `SAFE.`.
 * - `bq_range_array(r, step, include_last)`: GENERATE_RANGE_ARRAY, the subranges `[s, s + step)`
 *   from the start, the last one cut at the end (left out when `include_last` is FALSE and it is
 *   shorter than a step). A RANGE<TIMESTAMP> steps by a number of seconds, so a DAY is 24 hours
 *   whatever the session's zone (UTC, as BigQuery). An unbounded range, a step that is not
 *   positive, or a step of a part the element type does not take (a month of timestamps) is an
 *   error; at most 100,000 subranges (`bq_array_size_check`).
 */
const ELEMENTS = [
  {
    type: 'date',
    range: 'daterange',
    name: 'RANGE<DATE>',
    pattern: '^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}$',
    read: 'v::date',
  },
  {
    type: 'timestamp',
    range: 'tsrange',
    name: 'RANGE<DATETIME>',
    pattern: '^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([ Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\\.[0-9]{1,6})?)?$',
    read: 'v::timestamp',
  },
  {
    type: 'timestamptz',
    range: 'tstzrange',
    name: 'RANGE<TIMESTAMP>',
    pattern:
      '^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([ Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\\.[0-9]{1,6})?)?([zZ]|[+-][0-9]{1,2}(:[0-9]{2})?| ?UTC| [A-Za-z_]+(/[A-Za-z0-9_+-]+)*)?$',
    read: 'logs.bq_timestamp(v)',
  },
];

export const up = (pgm) => {
  for (const e of ELEMENTS) {
    pgm.sql(`
      CREATE OR REPLACE FUNCTION logs.bq_range(lower ${e.type}, upper ${e.type}, safe boolean) RETURNS ${e.range}
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
        AS $$ BEGIN
          IF lower >= upper THEN
            IF safe THEN RETURN NULL; END IF;
            RAISE EXCEPTION 'RANGE: the lower bound % is not before the upper bound %', lower, upper USING ERRCODE = '22023';
          END IF;
          RETURN ${e.range}(lower, upper, '[)');
        END $$;

      CREATE OR REPLACE FUNCTION logs.bq_parse_range(value text, safe boolean, kind ${e.type}) RETURNS ${e.range}
        LANGUAGE plpgsql IMMUTABLE PARALLEL RESTRICTED
        AS $$ DECLARE m text[]; lo ${e.type}; hi ${e.type}; v text;
        BEGIN
          IF value IS NULL THEN RETURN NULL; END IF;
          m := regexp_match(value, '^\\[([^,]+), ([^,]+)\\)$');
          IF m IS NULL OR NOT (upper(m[1]) IN ('UNBOUNDED', 'NULL') OR m[1] ~ '${e.pattern}')
             OR NOT (upper(m[2]) IN ('UNBOUNDED', 'NULL') OR m[2] ~ '${e.pattern}') THEN
            IF safe THEN RETURN NULL; END IF;
            RAISE EXCEPTION 'invalid ${e.name} text: %', value USING ERRCODE = '22007';
          END IF;
          BEGIN
            v := m[1];
            lo := CASE WHEN upper(v) IN ('UNBOUNDED', 'NULL') THEN NULL ELSE ${e.read} END;
            v := m[2];
            hi := CASE WHEN upper(v) IN ('UNBOUNDED', 'NULL') THEN NULL ELSE ${e.read} END;
          EXCEPTION WHEN data_exception THEN
            IF safe THEN RETURN NULL; END IF;
            RAISE;
          END;
          RETURN logs.bq_range(lo, hi, safe);
        END $$;
    `);
  }

  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.bq_range_intersect(a anyrange, b anyrange, safe boolean) RETURNS anyrange
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        IF NOT range_overlaps(a, b) THEN
          IF safe THEN RETURN NULL; END IF;
          RAISE EXCEPTION 'RANGE_INTERSECT: the ranges % and % do not overlap', a, b USING ERRCODE = '22023';
        END IF;
        RETURN range_intersect(a, b);
      END $$;

    -- Subranges of a bounded range; the step's parts are checked against the element type.
    CREATE OR REPLACE FUNCTION logs.bq_range_array(r daterange, step interval, include_last boolean) RETURNS daterange[]
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ DECLARE s date := lower(r); e date := upper(r);
      BEGIN
        IF lower_inf(r) OR upper_inf(r) THEN RAISE EXCEPTION 'GENERATE_RANGE_ARRAY needs a bounded range, not %', r USING ERRCODE = '22023'; END IF;
        IF extract(epoch FROM step - date_trunc('day', step)) <> 0 THEN
          RAISE EXCEPTION 'GENERATE_RANGE_ARRAY of a RANGE<DATE> steps by YEAR to DAY' USING ERRCODE = '22023';
        END IF;
        PERFORM logs.bq_array_size_check((e - s)::numeric * 86400 / nullif(greatest(extract(epoch FROM step), 0), 0), extract(epoch FROM step) <= 0);
        RETURN coalesce((SELECT array_agg(daterange(x, least(y, e), '[)') ORDER BY k)
                         FROM (SELECT k, (s + k * step)::date AS x, (s + (k + 1) * step)::date AS y
                               FROM generate_series(0, ((e - s)::numeric * 86400 / extract(epoch FROM step))::bigint + 1) AS k) g
                         WHERE x < e AND (include_last OR y <= e)), '{}');
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_range_array(r tsrange, step interval, include_last boolean) RETURNS tsrange[]
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ DECLARE s timestamp := lower(r); e timestamp := upper(r);
      BEGIN
        IF lower_inf(r) OR upper_inf(r) THEN RAISE EXCEPTION 'GENERATE_RANGE_ARRAY needs a bounded range, not %', r USING ERRCODE = '22023'; END IF;
        PERFORM logs.bq_array_size_check(extract(epoch FROM e - s) / nullif(greatest(extract(epoch FROM step), 0), 0), extract(epoch FROM step) <= 0);
        RETURN coalesce((SELECT array_agg(tsrange(x, least(y, e), '[)') ORDER BY k)
                         FROM (SELECT k, s + k * step AS x, s + (k + 1) * step AS y
                               FROM generate_series(0, (extract(epoch FROM e - s) / extract(epoch FROM step))::bigint + 1) AS k) g
                         WHERE x < e AND (include_last OR y <= e)), '{}');
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_range_array(r tstzrange, step interval, include_last boolean) RETURNS tstzrange[]
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ DECLARE s timestamptz := lower(r); e timestamptz := upper(r); seconds numeric := extract(epoch FROM step);
      BEGIN
        IF lower_inf(r) OR upper_inf(r) THEN RAISE EXCEPTION 'GENERATE_RANGE_ARRAY needs a bounded range, not %', r USING ERRCODE = '22023'; END IF;
        IF extract(month FROM step) <> 0 OR extract(year FROM step) <> 0 THEN
          RAISE EXCEPTION 'GENERATE_RANGE_ARRAY of a RANGE<TIMESTAMP> steps by DAY to SECOND' USING ERRCODE = '22023';
        END IF;
        PERFORM logs.bq_array_size_check((extract(epoch FROM e) - extract(epoch FROM s)) / nullif(greatest(seconds, 0), 0), seconds <= 0);
        RETURN coalesce((SELECT array_agg(tstzrange(x, least(y, e), '[)') ORDER BY k)
                         FROM (SELECT k, s + (k * seconds) * interval '1 second' AS x, s + ((k + 1) * seconds) * interval '1 second' AS y
                               FROM generate_series(0, floor((extract(epoch FROM e) - extract(epoch FROM s)) / seconds)::bigint + 1) AS k) g
                         WHERE x < e AND (include_last OR y <= e)), '{}');
      END $$;
  `);
};

export const down = (pgm) => {
  for (const e of ELEMENTS) {
    pgm.sql(`DROP FUNCTION IF EXISTS logs.bq_range(${e.type}, ${e.type}, boolean)`);
    pgm.sql(`DROP FUNCTION IF EXISTS logs.bq_parse_range(text, boolean, ${e.type})`);
    pgm.sql(`DROP FUNCTION IF EXISTS logs.bq_range_array(${e.range}, interval, boolean)`);
  }
  pgm.sql('DROP FUNCTION IF EXISTS logs.bq_range_intersect(anyrange, anyrange, boolean)');
};
