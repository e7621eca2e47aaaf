/**
 * Message search served by trigram indexes (src/storage/searchIndexes.ts):
 * - `sources.search_index`: the text columns of a source's log table that get a `pg_trgm` GIN
 *   index, `event_message` and the columns of STRING hot leaves (`["event_message",
 *   "metadata.request.path"]`); every source starts with `["event_message"]`, `[]` turns it off.
 * - the `pg_trgm` extension, where the server has it (it is a trusted extension: a database
 *   owner may create it). Without it the service runs as before and builds no search index.
 */
export const up = (pgm) => {
  pgm.addColumn('sources', { search_index: { type: 'jsonb', notNull: true, default: pgm.func(`'["event_message"]'::jsonb`) } });
  pgm.sql(`DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
  END IF;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'pg_trgm not created (%): no search indexes', SQLERRM;
END $$`);
};

export const down = (pgm) => {
  pgm.dropColumn('sources', 'search_index');
};
