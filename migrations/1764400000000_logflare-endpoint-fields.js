/**
 * Fields of the original service's endpoints that ours lacked (docs/COMPATIBILITY.md,
 * "Management API"): `enable_auth` (false: a public endpoint, run without a key, limited per
 * client address), `language` (only `bq_sql` is accepted) and `labels` (stored and echoed).
 */
export const up = (pgm) => {
  pgm.sql(`
    ALTER TABLE endpoints
      ADD COLUMN enable_auth boolean NOT NULL DEFAULT true,
      ADD COLUMN language text NOT NULL DEFAULT 'bq_sql',
      ADD COLUMN labels text`);
};

export const down = (pgm) => {
  pgm.sql('ALTER TABLE endpoints DROP COLUMN enable_auth, DROP COLUMN language, DROP COLUMN labels');
};
