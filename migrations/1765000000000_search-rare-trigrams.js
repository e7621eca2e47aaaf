/**
 * The rare-trigram search index (src/storage/searchIndexes.ts, src/storage/commonTrigrams.ts):
 * - `search_common_trigrams.index_function`: once a column's common trigrams are frozen, the
 *   function `logs.search_rare_trigrams_<hash>(text)` (its text's `show_trgm` less that set) that
 *   its search indexes are built on and the translator asks (src/sql/postgres/search.ts). NULL
 *   while the set is not frozen (a quiet column, measured again each day).
 * - `logs.search_inner_trigrams(text[])`: the trigrams of a list that hold no space, the inner
 *   trigrams of words, which any text holding such a word has; and `logs.search_ascii_words(text)`,
 *   the text with every run of characters other than ASCII letters and digits (and `I`, which a
 *   Turkish locale lowercases to `ı`) made one space, cut to its first 30,000 characters (the
 *   rare-trigram function keeps every trigram of a longer text, common ones too:
 *   src/storage/searchIndexes.ts RARE_TRIGRAMS_MAX_CHARS; a prefix's inner trigrams are the
 *   text's). The translator asks the index for
 *   `search_inner_trigrams(fn(search_ascii_words(pattern)))` of a LIKE pattern known only when the
 *   query runs: a trigram with a character outside ASCII is hashed by pg_trgm (printed `0x…`, no
 *   space in it even when padded), so only ASCII words give trigrams whose inner ones are sure.
 *   IMMUTABLE, so the planner folds them on the value. Operators and functions named with
 *   pg_catalog, so nothing a caller creates can stand in.
 */
export const up = (pgm) => {
  pgm.addColumn('search_common_trigrams', { index_function: { type: 'text' } });
  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.search_inner_trigrams(trigrams text[]) RETURNS text[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT ARRAY(SELECT t FROM pg_catalog.unnest(trigrams) AS t
                         WHERE pg_catalog.strpos(t, ' ') OPERATOR(pg_catalog.=) 0) $$`);
  pgm.sql(`
    CREATE OR REPLACE FUNCTION logs.search_ascii_words(pattern text) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT pg_catalog.left(pg_catalog.regexp_replace(pattern, '[^A-HJ-Za-z0-9]+', ' ', 'g'), 30000) $$`);
};

export const down = (pgm) => {
  pgm.sql('DROP FUNCTION IF EXISTS logs.search_inner_trigrams(text[])');
  pgm.sql('DROP FUNCTION IF EXISTS logs.search_ascii_words(text)');
  pgm.dropColumn('search_common_trigrams', 'index_function');
};
