/**
 * `search_common_trigrams`: per log table and searched column, the `pg_trgm` trigrams found in
 * more than COMMON_SHARE of a sample of one finished day's messages (src/storage/commonTrigrams.ts
 * measures them when that day's search index is valid; the newest such day is kept). The source
 * catalog hands them to the translator, which gives the trigram index only a needle's rare part
 * (src/sql/postgres/search.ts). At most a few hundred trigrams a row; no row: needles as written.
 */
export const up = (pgm) => {
  pgm.createTable('search_common_trigrams', {
    table_name: { type: 'text', notNull: true },
    column_name: { type: 'text', notNull: true },
    // The partition (day) sampled.
    partition: { type: 'text', notNull: true },
    sampled: { type: 'integer', notNull: true },
    trigrams: { type: 'text[]', notNull: true },
    measured_at: { type: 'timestamptz', notNull: true, default: pgm.func('now()') },
  });
  pgm.addConstraint('search_common_trigrams', 'search_common_trigrams_pkey', { primaryKey: ['table_name', 'column_name'] });
};

export const down = (pgm) => {
  pgm.dropTable('search_common_trigrams');
};
