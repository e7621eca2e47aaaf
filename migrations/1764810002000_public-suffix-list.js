/**
 * NET.PUBLIC_SUFFIX and NET.REG_DOMAIN (src/sql/library/net.ts) need the Public Suffix List. The
 * snapshot is migrations/reference-data/public_suffix_list.dat, publicsuffix.org's list of 2023-02-09 23:26
 * UTC (as packaged by Debian, publicsuffix 20230209.2326), under the Mozilla Public License 2.0
 * (docs/COMPATIBILITY.md, "Public suffixes"). Only its ICANN section is loaded: BigQuery ignores
 * the private domains. Rules are stored as publicsuffix.org writes them (`*.kh`, `!www.ck`) with
 * each label in its ASCII form (Punycode, `中国` → `xn--fiqs8s`), in table `logs.public_suffixes`,
 * beside the log tables (the reader role may read it, and nothing outside schema logs: SECURITY.md).
 *
 * The functions follow BigQuery's reference (its net_functions.md and the cases of GoogleSQL's
 * compliance tests):
 * - the host is NET.HOST's (`logs.bq_net_host`, rewritten here to answer GoogleSQL's compliance
 *   cases: no leading dots, trailing dots cut to one); a host in brackets (IPv6), or with two
 *   dots in a row, has no suffix;
 * - for the lookup only, ASCII letters are lower-cased and each label with other characters is
 *   written in Punycode (`bq_punycode`, RFC 3492); no Unicode normalisation, as in BigQuery;
 * - the prevailing rule is publicsuffix.org's (an exception rule wins, else the matching rule
 *   with the most labels, `*` matching one label), but a host no rule matches has no public suffix
 *   (NULL; publicsuffix.org's default rule `*` is not applied, as in BigQuery: `a.b` gives NULL);
 * - the answer is the labels of the original host (case and script kept; a trailing dot kept):
 *   `bq_public_suffix_labels` counts them; REG_DOMAIN adds one label, NULL when there is none.
 * STABLE (they read a table), STRICT, PARALLEL SAFE.
 */
import { readFileSync } from 'node:fs';
import { domainToASCII } from 'node:url';

const LIST = new URL('./reference-data/public_suffix_list.dat', import.meta.url);

/** The ICANN section's rules, each label in ASCII (lower case). */
function icannRules(text) {
  const start = text.indexOf('// ===BEGIN ICANN DOMAINS===');
  const end = text.indexOf('// ===END ICANN DOMAINS===');
  if (start < 0 || end < start) throw new Error('public_suffix_list.dat has no ICANN section');
  const rules = new Set();
  for (const line of text.slice(start, end).split('\n')) {
    const rule = line.trim().split(/\s/)[0];
    if (!rule || rule.startsWith('//')) continue;
    const exception = rule.startsWith('!');
    const labels = (exception ? rule.slice(1) : rule).split('.').map((label) => {
      if (label === '*') return label;
      const ascii = domainToASCII(label);
      if (!ascii) throw new Error(`public_suffix_list.dat: ${rule} has a label that is not a domain label`);
      return ascii;
    });
    rules.add((exception ? '!' : '') + labels.join('.'));
  }
  return [...rules];
}

const quote = (s) => `'${s.replace(/'/g, "''")}'`;

export const up = (pgm) => {
  const rules = icannRules(readFileSync(LIST, 'utf8'));
  pgm.sql(`CREATE TABLE IF NOT EXISTS logs.public_suffixes (rule text PRIMARY KEY)`);
  pgm.sql(
    `COMMENT ON TABLE logs.public_suffixes IS 'The ICANN rules of the Public Suffix List (migrations/reference-data/public_suffix_list.dat, MPL-2.0), labels in ASCII'`,
  );
  pgm.sql('TRUNCATE logs.public_suffixes');
  pgm.sql(`INSERT INTO logs.public_suffixes (rule) VALUES ${rules.map((r) => `(${quote(r)})`).join(', ')}`);
  pgm.sql('GRANT SELECT ON logs.public_suffixes TO logquery_reader');
  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.bq_punycode(label text) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
      DECLARE
        points constant int[] := (SELECT array_agg(ascii(c) ORDER BY i) FROM regexp_split_to_table(label, '') WITH ORDINALITY AS t(c, i));
        out text := (SELECT coalesce(string_agg(chr(c), '' ORDER BY i), '') FROM unnest(points) WITH ORDINALITY AS t(c, i) WHERE c < 128);
        basic constant int := length(out);
        handled int := length(out);
        n int := 128;
        delta bigint := 0;
        bias int := 72;
        m int;
        q bigint;
        k int;
        t int;
        c int;
      BEGIN
        IF basic > 0 THEN out := out || '-'; END IF;
        WHILE handled < cardinality(points) LOOP
          SELECT min(p) INTO m FROM unnest(points) AS p WHERE p >= n;
          delta := delta + (m - n)::bigint * (handled + 1);
          n := m;
          FOREACH c IN ARRAY points LOOP
            IF c < n THEN delta := delta + 1; END IF;
            IF c = n THEN
              q := delta;
              k := 36;
              LOOP -- delta as a generalised variable-length integer, digits a-z0-9
                t := CASE WHEN k <= bias THEN 1 WHEN k >= bias + 26 THEN 26 ELSE k - bias END;
                EXIT WHEN q < t;
                out := out || chr(CASE WHEN t + (q - t) % (36 - t) < 26 THEN 97 ELSE 22 END + (t + (q - t) % (36 - t))::int);
                q := (q - t) / (36 - t);
                k := k + 36;
              END LOOP;
              out := out || chr(CASE WHEN q < 26 THEN 97 ELSE 22 END + q::int);
              -- Bias adaptation (RFC 3492, 6.1).
              delta := CASE WHEN handled = basic THEN delta / 700 ELSE delta / 2 END;
              delta := delta + delta / (handled + 1);
              k := 0;
              WHILE delta > 455 LOOP
                delta := delta / 35;
                k := k + 36;
              END LOOP;
              bias := k + (36 * delta) / (delta + 38);
              delta := 0;
              handled := handled + 1;
            END IF;
          END LOOP;
          delta := delta + 1;
          n := n + 1;
        END LOOP;
        RETURN out;
      END $$;

    -- NET.HOST, replacing the first version of migrations/1764100002000_bigquery-net-conversion-functions.js, to answer as GoogleSQL's
    -- compliance cases do: the scheme is whatever precedes the first '://' (when that holds no
    -- '/', '?' or '#'; '@://x' reads host x), else a leading '//' is dropped; the authority ends
    -- at '/', '?' or '#'; user information ends at its last '@'; a bracketed IPv6 host keeps its
    -- brackets and colons (up to ']' or the end; a '[' inside makes it an ordinary host); an
    -- ordinary host ends at ':'; leading dots go and trailing dots are cut to one. NULL when empty.
    CREATE OR REPLACE FUNCTION logs.bq_net_host(url text) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT nullif(regexp_replace(ltrim(coalesce(substring(a FROM '^\\[[^][]*(?:\\]|$)'), substring(a FROM '^[^:]*')), '.'), '\\.+$', '.'), '')
            FROM (SELECT regexp_replace(substring(regexp_replace(regexp_replace(btrim(url, E' \\t\\n\\r\\f\\v'), '^[^/?#]*?://', ''), '^//', '') FROM '^[^/?#]*'),
                                        '^.*@', '') AS a) AS authority $$;
  `);
  pgm.sql(`
    DO $do$ BEGIN
      EXECUTE format($f$
        CREATE OR REPLACE FUNCTION logs.bq_public_suffix_labels(host text) RETURNS int
          LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
          AS $$
          DECLARE
            core constant text := rtrim(host, '.');
            labels text[];
            n int;
            rule text;
          BEGIN
            IF core = '' OR strpos(core, '..') > 0 OR left(core, 1) = '[' THEN RETURN NULL; END IF;
            SELECT array_agg(CASE WHEN octet_length(l) = length(l) THEN translate(l, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
                                  ELSE 'xn--' || logs.bq_punycode(translate(l, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')) END
                             ORDER BY i)
              INTO labels FROM unnest(string_to_array(core, '.')) WITH ORDINALITY AS u(l, i);
            n := cardinality(labels);
            FOR i IN 1 .. n LOOP
              SELECT min(s.rule) INTO rule FROM logs.public_suffixes s
                WHERE s.rule IN (array_to_string(labels[i:n], '.'), '!' || array_to_string(labels[i:n], '.'),
                                 '*.' || array_to_string(labels[i + 1:n], '.'));
              IF rule LIKE '!%%' THEN RETURN n - i; END IF; -- an exception: the rule without its first label
              IF rule IS NOT NULL THEN RETURN n - i + 1; END IF;
            END LOOP;
            RETURN NULL;
          END $$
      $f$, current_schema());
    END $do$`);
  pgm.sql(`
    -- The last k labels of a host, with its trailing dot if it has one.
    CREATE OR REPLACE FUNCTION logs.bq_host_tail(host text, k int) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT array_to_string((string_to_array(rtrim(host, '.'), '.'))[cardinality(string_to_array(rtrim(host, '.'), '.')) - k + 1:], '.')
                   || CASE WHEN right(host, 1) = '.' THEN '.' ELSE '' END $$;

    CREATE OR REPLACE FUNCTION logs.bq_net_public_suffix(url text) RETURNS text
      LANGUAGE sql STABLE STRICT PARALLEL SAFE
      AS $$ SELECT logs.bq_host_tail(h, logs.bq_public_suffix_labels(h)) FROM logs.bq_net_host(url) AS h $$;

    CREATE OR REPLACE FUNCTION logs.bq_net_reg_domain(url text) RETURNS text
      LANGUAGE sql STABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE WHEN logs.bq_public_suffix_labels(h) < cardinality(string_to_array(rtrim(h, '.'), '.'))
                        THEN logs.bq_host_tail(h, logs.bq_public_suffix_labels(h) + 1) END
            FROM logs.bq_net_host(url) AS h $$;
  `);
};

export const down = (pgm) => {
  for (const f of [
    'bq_net_reg_domain(text)',
    'bq_net_public_suffix(text)',
    'bq_host_tail(text, int)',
    'bq_public_suffix_labels(text)',
    'bq_punycode(text)',
  ])
    pgm.sql(`DROP FUNCTION IF EXISTS logs.${f}`);
  pgm.sql('DROP TABLE IF EXISTS logs.public_suffixes');
};
