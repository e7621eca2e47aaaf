/**
 * Schema `logs` for the log tables, and the role that runs endpoint queries.
 *
 * `logquery_reader` can only USAGE schema `logs` and SELECT its tables (default privileges
 * cover tables created later). Endpoint queries run under `SET LOCAL ROLE logquery_reader`
 * in a READ ONLY transaction: the third wall of sandboxing (SECURITY.md,
 * "Wall 3 — execution"). Roles are
 * cluster-wide, so creation is idempotent: several databases of one cluster share it.
 */
export const up = (pgm) => {
  pgm.sql('CREATE SCHEMA IF NOT EXISTS logs');
  pgm.sql(`
    DO $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'logquery_reader') THEN
        CREATE ROLE logquery_reader NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;
      END IF;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN
      NULL; -- another database of this cluster created it at the same moment
    END
    $$`);
  pgm.sql('GRANT logquery_reader TO CURRENT_USER');
  pgm.sql('GRANT USAGE ON SCHEMA logs TO logquery_reader');
  pgm.sql('GRANT SELECT ON ALL TABLES IN SCHEMA logs TO logquery_reader');
  pgm.sql('ALTER DEFAULT PRIVILEGES IN SCHEMA logs GRANT SELECT ON TABLES TO logquery_reader');
  // The reader must not create anything anywhere, even temporary tables.
  pgm.sql('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
  pgm.sql("DO $$ BEGIN EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database()); END $$");
};

export const down = (pgm) => {
  pgm.sql('DROP SCHEMA IF EXISTS logs CASCADE');
};
