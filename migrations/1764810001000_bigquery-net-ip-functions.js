/**
 * BigQuery's NET functions over IP addresses as BYTES in network byte order (src/sql/library/net.ts).
 * Plain plpgsql over bytea and text: they run on PGlite too. IMMUTABLE, STRICT, PARALLEL SAFE.
 * Errors are BigQuery's OUT_OF_RANGE cases, raised as SQLSTATE 22023 (a 400 naming the value).
 *
 * - `bq_ip_from_string_or_null(text)`: NET.SAFE_IP_FROM_STRING: a dotted quad (four numbers of at
 *   most three digits up to 255) gives 4 bytes; the colon form of RFC 4291 (groups of one to four
 *   hexadecimal digits, at most one `::`, an optional dotted quad as the last 32 bits) gives 16.
 *   Anything else (CIDR suffixes, zones, spaces) is NULL. `bq_ip_from_string` raises instead.
 * - `bq_ip_to_string(bytea)`: 4 bytes as a dotted quad, 16 as Postgres' inet prints IPv6 (RFC 5952:
 *   lower case, the longest run of zero groups as `::`, `::ffff:a.b.c.d` for mapped IPv4).
 * - `bq_ip_net_mask(bigint, bigint)`, `bq_ip_trunc(bytea, bigint)`: the first `prefix` bits set /
 *   kept, the others 0; 4 or 16 bytes and a prefix from 0 to 8 × bytes, else an error.
 * - `bq_ipv4_from_int64(bigint)`, `bq_ipv4_to_int64(bytea)`: an INT64 from -0x80000000 to
 *   0xFFFFFFFF (negative ones are 32-bit two's complement) and 4 bytes.
 */
export const up = (pgm) => {
  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.bq_ip_from_string_or_null(addr text) RETURNS bytea
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        m text[];
        v4 bytea;
        parts text[];
        head text[];
        tail text[];
        g text;
        groups int;
      BEGIN
        m := regexp_match(addr, '^([0-9]{1,3})\\.([0-9]{1,3})\\.([0-9]{1,3})\\.([0-9]{1,3})$');
        IF m IS NOT NULL THEN
          IF greatest(m[1]::int, m[2]::int, m[3]::int, m[4]::int) > 255 THEN RETURN NULL; END IF;
          RETURN decode(lpad(to_hex(m[1]::int), 2, '0') || lpad(to_hex(m[2]::int), 2, '0') || lpad(to_hex(m[3]::int), 2, '0')
                        || lpad(to_hex(m[4]::int), 2, '0'), 'hex');
        END IF;
        IF strpos(addr, ':') = 0 OR addr !~ '^[0-9A-Fa-f:.]+$' THEN RETURN NULL; END IF;
        -- A dotted quad as the last 32 bits becomes two hexadecimal groups.
        m := regexp_match(addr, '^(.*:)([0-9.]+)$');
        IF m IS NOT NULL AND strpos(m[2], '.') > 0 THEN
          v4 := logs.bq_ip_from_string_or_null(m[2]);
          IF v4 IS NULL OR length(v4) <> 4 THEN RETURN NULL; END IF;
          addr := m[1] || encode(substr(v4, 1, 2), 'hex') || ':' || encode(substr(v4, 3, 2), 'hex');
        END IF;
        IF strpos(addr, '.') > 0 THEN RETURN NULL; END IF;
        parts := string_to_array(addr, '::');
        IF cardinality(parts) > 2 THEN RETURN NULL; END IF;
        head := CASE WHEN parts[1] = '' THEN '{}'::text[] ELSE string_to_array(parts[1], ':') END;
        tail := CASE WHEN cardinality(parts) = 1 OR parts[2] = '' THEN '{}'::text[] ELSE string_to_array(parts[2], ':') END;
        groups := cardinality(head) + cardinality(tail);
        -- Without '::' there are eight groups; '::' stands for at least one group of zeros.
        IF (cardinality(parts) = 1 AND groups <> 8) OR (cardinality(parts) = 2 AND groups > 7) THEN RETURN NULL; END IF;
        FOREACH g IN ARRAY head || tail LOOP
          IF g !~ '^[0-9A-Fa-f]{1,4}$' THEN RETURN NULL; END IF;
        END LOOP;
        RETURN decode(
          coalesce((SELECT string_agg(lpad(x, 4, '0'), '' ORDER BY n) FROM unnest(head) WITH ORDINALITY AS h(x, n)), '')
          || repeat('0000', 8 - groups)
          || coalesce((SELECT string_agg(lpad(x, 4, '0'), '' ORDER BY n) FROM unnest(tail) WITH ORDINALITY AS t(x, n)), ''),
          'hex');
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_ip_from_string(addr text) RETURNS bytea
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        b constant bytea := logs.bq_ip_from_string_or_null(addr);
      BEGIN
        IF b IS NULL THEN
          RAISE EXCEPTION 'NET.IP_FROM_STRING: % is not an IPv4 or IPv6 address', addr USING ERRCODE = '22023';
        END IF;
        RETURN b;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_ip_length_check(fn text, bytes int) RETURNS void
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        IF bytes NOT IN (4, 16) THEN
          RAISE EXCEPTION '%: an address has 4 or 16 bytes, not %', fn, bytes USING ERRCODE = '22023';
        END IF;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_ip_prefix_check(fn text, bytes int, prefix bigint) RETURNS void
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        PERFORM logs.bq_ip_length_check(fn, bytes);
        IF prefix < 0 OR prefix > 8 * bytes THEN
          RAISE EXCEPTION '%: the prefix length must be 0 to %, not %', fn, 8 * bytes, prefix USING ERRCODE = '22023';
        END IF;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_ip_to_string(b bytea) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        PERFORM logs.bq_ip_length_check('NET.IP_TO_STRING', length(b));
        IF length(b) = 4 THEN
          RETURN get_byte(b, 0) || '.' || get_byte(b, 1) || '.' || get_byte(b, 2) || '.' || get_byte(b, 3);
        END IF;
        RETURN host(regexp_replace(encode(b, 'hex'), '(....)(?!$)', '\\1:', 'g')::inet);
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_ip_net_mask(bytes bigint, prefix bigint) RETURNS bytea
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        hex text := '';
      BEGIN
        IF bytes NOT IN (4, 16) THEN
          RAISE EXCEPTION 'NET.IP_NET_MASK: the number of bytes must be 4 or 16, not %', bytes USING ERRCODE = '22023';
        END IF;
        PERFORM logs.bq_ip_prefix_check('NET.IP_NET_MASK', bytes::int, prefix);
        FOR i IN 0 .. bytes - 1 LOOP -- byte i has k = prefix - 8i (0 to 8) leading ones: 0xFF00 >> k
          hex := hex || lpad(to_hex((65280 >> least(8, greatest(0, prefix - 8 * i))::int) & 255), 2, '0');
        END LOOP;
        RETURN decode(hex, 'hex');
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_ip_trunc(b bytea, prefix bigint) RETURNS bytea
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        out bytea := b;
        mask bytea;
      BEGIN
        PERFORM logs.bq_ip_prefix_check('NET.IP_TRUNC', length(b), prefix);
        mask := logs.bq_ip_net_mask(length(b), prefix);
        FOR i IN 0 .. length(b) - 1 LOOP
          out := set_byte(out, i, get_byte(b, i) & get_byte(mask, i));
        END LOOP;
        RETURN out;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_ipv4_from_int64(v bigint) RETURNS bytea
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        IF v < -2147483648 OR v > 4294967295 THEN
          RAISE EXCEPTION 'NET.IPV4_FROM_INT64: % is not a 32-bit IPv4 address', v USING ERRCODE = '22023';
        END IF;
        RETURN substr(int8send(v & 4294967295), 5);
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_ipv4_to_int64(b bytea) RETURNS bigint
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ BEGIN
        IF length(b) <> 4 THEN
          RAISE EXCEPTION 'NET.IPV4_TO_INT64: an IPv4 address has 4 bytes, not %', length(b) USING ERRCODE = '22023';
        END IF;
        RETURN (get_byte(b, 0)::bigint << 24) | (get_byte(b, 1) << 16) | (get_byte(b, 2) << 8) | get_byte(b, 3);
      END $$;
  `);
};

export const down = (pgm) => {
  for (const f of [
    'bq_ip_from_string_or_null(text)',
    'bq_ip_from_string(text)',
    'bq_ip_to_string(bytea)',
    'bq_ip_net_mask(bigint, bigint)',
    'bq_ip_trunc(bytea, bigint)',
    'bq_ip_prefix_check(text, int, bigint)',
    'bq_ip_length_check(text, int)',
    'bq_ipv4_from_int64(bigint)',
    'bq_ipv4_to_int64(bytea)',
  ])
    pgm.sql(`DROP FUNCTION IF EXISTS logs.${f}`);
};
