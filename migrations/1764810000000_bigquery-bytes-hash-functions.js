/**
 * BigQuery's BYTES string functions and the hashes Postgres lacks (src/sql/library/strings.ts,
 * hash.ts). Plain SQL and plpgsql: no extension (pgcrypto is not installed everywhere), so they
 * also run on PGlite. IMMUTABLE, STRICT, PARALLEL SAFE.
 *
 * - `bq_code_points_to_bytes(bigint[])`: CODE_POINTS_TO_BYTES; NULL when an element is NULL, an
 *   error for a value outside 0–255.
 * - `bq_bytes_to_code_points(bytea)`: TO_CODE_POINTS of BYTES, the byte values.
 * - `bq_to_base32(bytea)` / `bq_from_base32(text)`: RFC 4648 base32 with `=` padding. Decoding
 *   takes upper or lower case and the padding may be left out; another character, `=` before the
 *   end or a length no encoding has is an error, as in BigQuery.
 * - `bq_safe_bytes_to_string(bytea)`: SAFE_CONVERT_BYTES_TO_STRING: UTF-8 text with each maximal
 *   invalid sequence replaced by U+FFFD. A NUL byte is dropped (Postgres text cannot hold one; the
 *   translator's CHR(0) is '' for the same reason).
 * - `bq_sha1(bytea)`: SHA-1 (FIPS 180-4) over 32-bit words held in bigint.
 * - `bq_farm_fingerprint(bytea)`: FARM_FINGERPRINT, FarmHash's Fingerprint64 (farmhashna Hash64).
 *   Unsigned 64-bit words are held in bigint (two's complement, so the bits are the same); XOR,
 *   AND and shifts are bigint's, and sums and products are taken in numeric and reduced modulo
 *   2^64 (`bq_u64`), since bigint arithmetic raises on overflow where C++ wraps.
 */
export const up = (pgm) => {
  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.bq_code_points_to_bytes(points bigint[]) RETURNS bytea
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        hex text := '';
        p bigint;
      BEGIN
        FOREACH p IN ARRAY points LOOP
          IF p IS NULL THEN RETURN NULL; END IF;
          IF p < 0 OR p > 255 THEN
            RAISE EXCEPTION 'CODE_POINTS_TO_BYTES: invalid code point %: values must be 0 to 255', p USING ERRCODE = '22023';
          END IF;
          hex := hex || lpad(to_hex(p), 2, '0');
        END LOOP;
        RETURN decode(hex, 'hex');
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_bytes_to_code_points(b bytea) RETURNS bigint[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT coalesce(array_agg(get_byte(b, i)::bigint ORDER BY i), '{}') FROM generate_series(0, length(b) - 1) AS i $$;

    CREATE OR REPLACE FUNCTION logs.bq_to_base32(b bytea) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        alphabet constant text := 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
        out text := '';
        buf bigint := 0;
        bits int := 0;
      BEGIN
        FOR i IN 0 .. length(b) - 1 LOOP
          buf := (buf << 8) | get_byte(b, i);
          bits := bits + 8;
          WHILE bits >= 5 LOOP
            bits := bits - 5;
            out := out || substr(alphabet, ((buf >> bits) & 31)::int + 1, 1);
          END LOOP;
          buf := buf & ((1::bigint << bits) - 1);
        END LOOP;
        IF bits > 0 THEN out := out || substr(alphabet, ((buf << (5 - bits)) & 31)::int + 1, 1); END IF;
        RETURN out || repeat('=', (8 - length(out) % 8) % 8);
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_from_base32(s text) RETURNS bytea
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        body constant text := upper(rtrim(s, '='));
        hex text := '';
        buf bigint := 0;
        bits int := 0;
        v int;
      BEGIN
        IF length(body) % 8 IN (1, 3, 6) OR (length(body) < length(s) AND length(s) % 8 <> 0) THEN
          RAISE EXCEPTION 'FROM_BASE32: % is not base32: its length is not that of an encoding', s USING ERRCODE = '22023';
        END IF;
        FOR i IN 1 .. length(body) LOOP
          v := strpos('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', substr(body, i, 1)) - 1;
          IF v < 0 THEN
            RAISE EXCEPTION 'FROM_BASE32: % is not base32: % at position %', s, substr(s, i, 1), i USING ERRCODE = '22023';
          END IF;
          buf := (buf << 5) | v;
          bits := bits + 5;
          IF bits >= 8 THEN
            bits := bits - 8;
            hex := hex || lpad(to_hex((buf >> bits) & 255), 2, '0');
            buf := buf & ((1::bigint << bits) - 1);
          END IF;
        END LOOP;
        RETURN decode(hex, 'hex');
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_safe_bytes_to_string(b bytea) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        out text := '';
        n constant int := length(b);
        i int := 0;
        j int;
        c int;
        need int;
        cp int;
        lo int;
        hi int;
      BEGIN
        BEGIN
          RETURN convert_from(b, 'UTF8'); -- valid UTF-8 without NUL: the usual case, in one call
        EXCEPTION WHEN character_not_in_repertoire THEN
          NULL;
        END;
        WHILE i < n LOOP
          c := get_byte(b, i);
          IF c < 128 THEN
            IF c > 0 THEN out := out || chr(c); END IF;
            i := i + 1;
            CONTINUE;
          END IF;
          need := CASE WHEN c BETWEEN 194 AND 223 THEN 1 WHEN c BETWEEN 224 AND 239 THEN 2 WHEN c BETWEEN 240 AND 244 THEN 3 ELSE 0 END;
          IF need = 0 THEN
            out := out || chr(65533);
            i := i + 1;
            CONTINUE;
          END IF;
          cp := c & (CASE need WHEN 1 THEN 31 WHEN 2 THEN 15 ELSE 7 END);
          -- The second byte's range excludes overlong forms, surrogates and code points past U+10FFFF.
          lo := CASE c WHEN 224 THEN 160 WHEN 240 THEN 144 ELSE 128 END;
          hi := CASE c WHEN 237 THEN 159 WHEN 244 THEN 143 ELSE 191 END;
          j := 1;
          WHILE j <= need AND i + j < n LOOP
            c := get_byte(b, i + j);
            EXIT WHEN c < lo OR c > hi;
            cp := (cp << 6) | (c & 63);
            lo := 128;
            hi := 191;
            j := j + 1;
          END LOOP;
          out := out || CASE WHEN j > need THEN chr(cp) ELSE chr(65533) END;
          i := i + j;
        END LOOP;
        RETURN out;
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_sha1(msg bytea) RETURNS bytea
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        m32 constant bigint := 4294967295;
        padded constant bytea := msg || '\\x80'::bytea || decode(repeat('00', (55 - length(msg) % 64 + 64) % 64), 'hex')
                                 || int8send(length(msg)::bigint * 8);
        h0 bigint := 1732584193;
        h1 bigint := 4023233417;
        h2 bigint := 2562383102;
        h3 bigint := 271733878;
        h4 bigint := 3285377520;
        w bigint[] := array_fill(0::bigint, ARRAY[80], ARRAY[0]);
        a bigint; b bigint; c bigint; d bigint; e bigint; f bigint; k bigint; t bigint;
        o int;
      BEGIN
        FOR chunk IN 0 .. length(padded) / 64 - 1 LOOP
          FOR i IN 0 .. 15 LOOP
            o := chunk * 64 + i * 4;
            w[i] := (get_byte(padded, o)::bigint << 24) | (get_byte(padded, o + 1) << 16) | (get_byte(padded, o + 2) << 8) | get_byte(padded, o + 3);
          END LOOP;
          FOR i IN 16 .. 79 LOOP
            t := w[i - 3] # w[i - 8] # w[i - 14] # w[i - 16];
            w[i] := ((t << 1) | (t >> 31)) & m32;
          END LOOP;
          a := h0; b := h1; c := h2; d := h3; e := h4;
          FOR i IN 0 .. 79 LOOP
            IF i < 20 THEN f := (b & c) | ((b # m32) & d); k := 1518500249;
            ELSIF i < 40 THEN f := b # c # d; k := 1859775393;
            ELSIF i < 60 THEN f := (b & c) | (b & d) | (c & d); k := 2400959708;
            ELSE f := b # c # d; k := 3395469782;
            END IF;
            t := ((((a << 5) | (a >> 27)) & m32) + f + e + k + w[i]) & m32;
            e := d;
            d := c;
            c := ((b << 30) | (b >> 2)) & m32;
            b := a;
            a := t;
          END LOOP;
          h0 := (h0 + a) & m32;
          h1 := (h1 + b) & m32;
          h2 := (h2 + c) & m32;
          h3 := (h3 + d) & m32;
          h4 := (h4 + e) & m32;
        END LOOP;
        RETURN substr(int8send(h0), 5) || substr(int8send(h1), 5) || substr(int8send(h2), 5) || substr(int8send(h3), 5) || substr(int8send(h4), 5);
      END $$;

    -- Unsigned 64-bit words in bigint: n modulo 2^64, as the bigint with the same bits.
    CREATE OR REPLACE FUNCTION logs.bq_u64(n numeric) RETURNS bigint
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT (mod(mod(n + 9223372036854775808, 18446744073709551616) + 18446744073709551616, 18446744073709551616) - 9223372036854775808)::bigint $$;

    -- Logical shift right by 1 to 63 bits (bigint's >> copies the sign bit).
    CREATE OR REPLACE FUNCTION logs.bq_u64_shr(x bigint, n int) RETURNS bigint
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT (x >> n) & ~((-1)::bigint << (64 - n)) $$;

    CREATE OR REPLACE FUNCTION logs.bq_u64_rotate(x bigint, n int) RETURNS bigint
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT logs.bq_u64_shr(x, n) | (x << (64 - n)) $$;

    -- The 8 bytes at offset i, little-endian (FarmHash's Fetch64).
    CREATE OR REPLACE FUNCTION logs.bq_u64_fetch(s bytea, i int) RETURNS bigint
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT get_byte(s, i)::bigint | (get_byte(s, i + 1)::bigint << 8) | (get_byte(s, i + 2)::bigint << 16)
                 | (get_byte(s, i + 3)::bigint << 24) | (get_byte(s, i + 4)::bigint << 32) | (get_byte(s, i + 5)::bigint << 40)
                 | (get_byte(s, i + 6)::bigint << 48) | (get_byte(s, i + 7)::bigint << 56) $$;

    -- The 4 bytes at offset i, little-endian, unsigned (Fetch32).
    CREATE OR REPLACE FUNCTION logs.bq_u32_fetch(s bytea, i int) RETURNS bigint
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT get_byte(s, i)::bigint | (get_byte(s, i + 1)::bigint << 8) | (get_byte(s, i + 2)::bigint << 16) | (get_byte(s, i + 3)::bigint << 24) $$;

    -- FarmHash's ShiftMix and HashLen16 (a Murmur-inspired mix of two words).
    CREATE OR REPLACE FUNCTION logs.bq_farm_shift_mix(v bigint) RETURNS bigint
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT v # logs.bq_u64_shr(v, 47) $$;

    CREATE OR REPLACE FUNCTION logs.bq_farm_len16(u bigint, v bigint, mul bigint) RETURNS bigint
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        a bigint := logs.bq_farm_shift_mix(logs.bq_u64((u # v)::numeric * mul));
        b bigint := logs.bq_farm_shift_mix(logs.bq_u64((v # a)::numeric * mul));
      BEGIN
        RETURN logs.bq_u64(b::numeric * mul);
      END $$;

    -- WeakHashLen32WithSeeds over the 32 bytes at offset i: two words (an array, so that callers
    -- assign it as an expression rather than run a query per call).
    CREATE OR REPLACE FUNCTION logs.bq_farm_weak32(s bytea, i int, a bigint, b bigint) RETURNS bigint[]
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        z constant bigint := logs.bq_u64_fetch(s, i + 24);
        c bigint;
      BEGIN
        a := logs.bq_u64(a::numeric + logs.bq_u64_fetch(s, i));
        b := logs.bq_u64_rotate(logs.bq_u64(b::numeric + a + z), 21);
        c := a;
        a := logs.bq_u64(a::numeric + logs.bq_u64_fetch(s, i + 8) + logs.bq_u64_fetch(s, i + 16));
        b := logs.bq_u64(b::numeric + logs.bq_u64_rotate(a, 44));
        RETURN ARRAY[logs.bq_u64(a::numeric + z), logs.bq_u64(b::numeric + c)];
      END $$;

    CREATE OR REPLACE FUNCTION logs.bq_farm_fingerprint(s bytea) RETURNS bigint
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        k0 constant bigint := -4348849565147123417; -- 0xc3a5c85c97cb3127
        k1 constant bigint := -5435081209227447693; -- 0xb492b66fbe98f273
        k2 constant bigint := -7286425919675154353; -- 0x9ae16a3b2f90404f
        len constant int := length(s);
        mul bigint := logs.bq_u64(k2::numeric + len * 2);
        a bigint; b bigint; c bigint; d bigint; e bigint; f bigint; g bigint; h bigint;
        x bigint; y bigint; z bigint; t bigint;
        v bigint[] := ARRAY[0, 0]; -- FarmHash's pairs v and w: v[1] is v.first
        w bigint[] := ARRAY[0, 0];
        pos int := 0;
      BEGIN
        IF len <= 16 THEN
          IF len >= 8 THEN
            a := logs.bq_u64(logs.bq_u64_fetch(s, 0)::numeric + k2);
            b := logs.bq_u64_fetch(s, len - 8);
            c := logs.bq_u64(logs.bq_u64_rotate(b, 37)::numeric * mul + a);
            d := logs.bq_u64((logs.bq_u64_rotate(a, 25)::numeric + b) * mul);
            RETURN logs.bq_farm_len16(c, d, mul);
          ELSIF len >= 4 THEN
            RETURN logs.bq_farm_len16(len + (logs.bq_u32_fetch(s, 0) << 3), logs.bq_u32_fetch(s, len - 4), mul);
          ELSIF len > 0 THEN
            y := get_byte(s, 0) + (get_byte(s, len >> 1)::bigint << 8);
            z := len + (get_byte(s, len - 1)::bigint << 2);
            RETURN logs.bq_u64(logs.bq_farm_shift_mix(logs.bq_u64(y::numeric * k2) # logs.bq_u64(z::numeric * k0))::numeric * k2);
          END IF;
          RETURN k2;
        ELSIF len <= 32 THEN
          a := logs.bq_u64(logs.bq_u64_fetch(s, 0)::numeric * k1);
          b := logs.bq_u64_fetch(s, 8);
          c := logs.bq_u64(logs.bq_u64_fetch(s, len - 8)::numeric * mul);
          d := logs.bq_u64(logs.bq_u64_fetch(s, len - 16)::numeric * k2);
          RETURN logs.bq_farm_len16(
            logs.bq_u64(logs.bq_u64_rotate(logs.bq_u64(a::numeric + b), 43)::numeric + logs.bq_u64_rotate(c, 30) + d),
            logs.bq_u64(a::numeric + logs.bq_u64_rotate(logs.bq_u64(b::numeric + k2), 18) + c),
            mul);
        ELSIF len <= 64 THEN
          a := logs.bq_u64(logs.bq_u64_fetch(s, 0)::numeric * k2);
          b := logs.bq_u64_fetch(s, 8);
          c := logs.bq_u64(logs.bq_u64_fetch(s, len - 8)::numeric * mul);
          d := logs.bq_u64(logs.bq_u64_fetch(s, len - 16)::numeric * k2);
          y := logs.bq_u64(logs.bq_u64_rotate(logs.bq_u64(a::numeric + b), 43)::numeric + logs.bq_u64_rotate(c, 30) + d);
          z := logs.bq_farm_len16(y, logs.bq_u64(a::numeric + logs.bq_u64_rotate(logs.bq_u64(b::numeric + k2), 18) + c), mul);
          e := logs.bq_u64(logs.bq_u64_fetch(s, 16)::numeric * mul);
          f := logs.bq_u64_fetch(s, 24);
          g := logs.bq_u64((y::numeric + logs.bq_u64_fetch(s, len - 32)) * mul);
          h := logs.bq_u64((z::numeric + logs.bq_u64_fetch(s, len - 24)) * mul);
          RETURN logs.bq_farm_len16(
            logs.bq_u64(logs.bq_u64_rotate(logs.bq_u64(e::numeric + f), 43)::numeric + logs.bq_u64_rotate(g, 30) + h),
            logs.bq_u64(e::numeric + logs.bq_u64_rotate(logs.bq_u64(f::numeric + a), 18) + g),
            mul);
        END IF;
        -- Over 64 bytes: 64-byte blocks into a state of seven words, then the last 64 bytes.
        x := 81;
        y := logs.bq_u64(81::numeric * k1 + 113);
        z := logs.bq_u64(logs.bq_farm_shift_mix(logs.bq_u64(y::numeric * k2 + 113))::numeric * k2);
        x := logs.bq_u64(x::numeric * k2 + logs.bq_u64_fetch(s, 0));
        LOOP
          x := logs.bq_u64(logs.bq_u64_rotate(logs.bq_u64(x::numeric + y + v[1] + logs.bq_u64_fetch(s, pos + 8)), 37)::numeric * k1);
          y := logs.bq_u64(logs.bq_u64_rotate(logs.bq_u64(y::numeric + v[2] + logs.bq_u64_fetch(s, pos + 48)), 42)::numeric * k1);
          x := x # w[2];
          y := logs.bq_u64(y::numeric + v[1] + logs.bq_u64_fetch(s, pos + 40));
          z := logs.bq_u64(logs.bq_u64_rotate(logs.bq_u64(z::numeric + w[1]), 33)::numeric * k1);
          v := logs.bq_farm_weak32(s, pos, logs.bq_u64(v[2]::numeric * k1), logs.bq_u64(x::numeric + w[1]));
          w := logs.bq_farm_weak32(s, pos + 32, logs.bq_u64(z::numeric + w[2]), logs.bq_u64(y::numeric + logs.bq_u64_fetch(s, pos + 16)));
          t := z; z := x; x := t;
          pos := pos + 64;
          EXIT WHEN pos = ((len - 1) / 64) * 64;
        END LOOP;
        mul := logs.bq_u64(k1::numeric + ((z & 255) << 1));
        pos := len - 64;
        w[1] := logs.bq_u64(w[1]::numeric + ((len - 1) & 63));
        v[1] := logs.bq_u64(v[1]::numeric + w[1]);
        w[1] := logs.bq_u64(w[1]::numeric + v[1]);
        x := logs.bq_u64(logs.bq_u64_rotate(logs.bq_u64(x::numeric + y + v[1] + logs.bq_u64_fetch(s, pos + 8)), 37)::numeric * mul);
        y := logs.bq_u64(logs.bq_u64_rotate(logs.bq_u64(y::numeric + v[2] + logs.bq_u64_fetch(s, pos + 48)), 42)::numeric * mul);
        x := x # logs.bq_u64(w[2]::numeric * 9);
        y := logs.bq_u64(y::numeric + v[1]::numeric * 9 + logs.bq_u64_fetch(s, pos + 40));
        z := logs.bq_u64(logs.bq_u64_rotate(logs.bq_u64(z::numeric + w[1]), 33)::numeric * mul);
        v := logs.bq_farm_weak32(s, pos, logs.bq_u64(v[2]::numeric * mul), logs.bq_u64(x::numeric + w[1]));
        w := logs.bq_farm_weak32(s, pos + 32, logs.bq_u64(z::numeric + w[2]), logs.bq_u64(y::numeric + logs.bq_u64_fetch(s, pos + 16)));
        t := z; z := x; x := t;
        RETURN logs.bq_farm_len16(
          logs.bq_u64(logs.bq_farm_len16(v[1], w[1], mul)::numeric + logs.bq_farm_shift_mix(y)::numeric * k0 + z),
          logs.bq_u64(logs.bq_farm_len16(v[2], w[2], mul)::numeric + x),
          mul);
      END $$;
  `);
};

export const down = (pgm) => {
  for (const f of [
    'bq_code_points_to_bytes(bigint[])',
    'bq_bytes_to_code_points(bytea)',
    'bq_to_base32(bytea)',
    'bq_from_base32(text)',
    'bq_safe_bytes_to_string(bytea)',
    'bq_sha1(bytea)',
    'bq_farm_fingerprint(bytea)',
    'bq_farm_weak32(bytea, int, bigint, bigint)',
    'bq_farm_len16(bigint, bigint, bigint)',
    'bq_farm_shift_mix(bigint)',
    'bq_u32_fetch(bytea, int)',
    'bq_u64_fetch(bytea, int)',
    'bq_u64_rotate(bigint, int)',
    'bq_u64_shr(bigint, int)',
    'bq_u64(numeric)',
  ])
    pgm.sql(`DROP FUNCTION IF EXISTS logs.${f}`);
};
