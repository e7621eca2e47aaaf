/**
 * What `import logflare` (src/import/logflare/) has brought over from an install of the original
 * service, one row per source and UTC day of its events. `after_timestamp`/`after_id` are the
 * last event written (the original's `timestamp` as text, to the microsecond, and its `id`):
 * they commit in the same transaction as the rows they cover, so a run killed at any point
 * resumes after the last batch that committed and writes nothing twice. `done` marks a day
 * finished that can gain no more events (before the day the run started); such a day is not
 * read again.
 *
 * `logflare_import_runs`: each run and its report; a finished run tells the service's start not
 * to import again (the CLI always runs: a re-run imports nothing twice).
 */
export const up = (pgm) => {
  pgm.createTable('logflare_import_days', {
    source_id: { type: 'uuid', notNull: true },
    day: { type: 'date', notNull: true },
    after_timestamp: { type: 'text' },
    after_id: { type: 'text' },
    events: { type: 'bigint', notNull: true, default: 0 },
    // Events of the original the normal write path refused (reported by the import, never retried).
    rejected: { type: 'bigint', notNull: true, default: 0 },
    done: { type: 'boolean', notNull: true, default: false },
    updated_at: { type: 'timestamptz', notNull: true, default: pgm.func('now()') },
  });
  pgm.addConstraint('logflare_import_days', 'logflare_import_days_pkey', { primaryKey: ['source_id', 'day'] });
  pgm.createTable('logflare_import_runs', {
    id: { type: 'uuid', primaryKey: true, default: pgm.func('gen_random_uuid()') },
    started_at: { type: 'timestamptz', notNull: true, default: pgm.func('now()') },
    finished_at: { type: 'timestamptz' },
    report: { type: 'jsonb' },
  });
};

export const down = (pgm) => {
  pgm.dropTable('logflare_import_runs');
  pgm.dropTable('logflare_import_days');
};
