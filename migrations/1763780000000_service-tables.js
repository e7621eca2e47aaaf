/**
 * The service's own tables: saved endpoints, log sources (with their inferred schema), API keys.
 * Log events live in schema `logs`, one partitioned table per source, created by the service
 * when a source is created (src/storage/logTables.ts).
 */
export const up = (pgm) => {
  pgm.createTable('endpoints', {
    id: { type: 'uuid', primaryKey: true, default: pgm.func('gen_random_uuid()') },
    name: { type: 'text', notNull: true, unique: true },
    description: { type: 'text', notNull: true, default: '' },
    query: { type: 'text', notNull: true },
    parameters: { type: 'jsonb', notNull: true, default: '[]' },
    max_rows: { type: 'integer', notNull: true, default: 1000 },
    cache_duration_seconds: { type: 'integer', notNull: true, default: 0 },
    cache_warming_seconds: { type: 'integer' },
    sandboxable: { type: 'boolean', notNull: true, default: false },
    redact_pii: { type: 'boolean', notNull: true, default: false },
    // Bumped on every change: part of every cache key, so a change invalidates old entries.
    version: { type: 'integer', notNull: true, default: 1 },
    created_at: { type: 'timestamptz', notNull: true, default: pgm.func('now()') },
    updated_at: { type: 'timestamptz', notNull: true, default: pgm.func('now()') },
  });
  pgm.addConstraint('endpoints', 'endpoints_name_format', { check: "name ~ '^[A-Za-z0-9_.-]+$'" });
  pgm.addConstraint('endpoints', 'endpoints_max_rows_positive', { check: 'max_rows > 0' });

  pgm.createTable('sources', {
    id: { type: 'uuid', primaryKey: true, default: pgm.func('gen_random_uuid()') },
    name: { type: 'text', notNull: true, unique: true },
    table_name: { type: 'text', notNull: true, unique: true },
    retention_days: { type: 'integer', notNull: true, default: 30 },
    // Inferred BigQuery-style schema of the JSON fields (src/sources/schema.ts), merged at ingest.
    schema: { type: 'jsonb', notNull: true, default: '{}' },
    created_at: { type: 'timestamptz', notNull: true, default: pgm.func('now()') },
    updated_at: { type: 'timestamptz', notNull: true, default: pgm.func('now()') },
  });

  pgm.createTable('api_keys', {
    id: { type: 'uuid', primaryKey: true, default: pgm.func('gen_random_uuid()') },
    name: { type: 'text', notNull: true },
    // SHA-256 of the key; the key itself is shown once at creation and never stored.
    key_hash: { type: 'text', notNull: true, unique: true },
    // First characters of the key, so an operator can tell keys apart in a listing.
    prefix: { type: 'text', notNull: true },
    scopes: { type: 'text[]', notNull: true },
    created_at: { type: 'timestamptz', notNull: true, default: pgm.func('now()') },
  });
};

export const down = (pgm) => {
  pgm.dropTable('api_keys');
  pgm.dropTable('sources');
  pgm.dropTable('endpoints');
};
