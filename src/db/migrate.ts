import pg from 'pg';
import { runner } from 'node-pg-migrate';
import type { Logger } from '../logger.js';
import { MIGRATIONS_DIR } from '../paths.js';

/**
 * Applies pending migrations. Safe to run on every start and from several processes (advisory
 * lock). `schema`: where the service's own tables go (DATABASE_SCHEMA), created when missing.
 */
export async function migrateUp(databaseUrl: string, logger?: Logger, schema = 'public'): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const ran = await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      direction: 'up',
      migrationsTable: 'pgmigrations',
      schema,
      createSchema: schema !== 'public',
      checkOrder: true,
      advisoryLockMode: 'wait',
      log: (msg: string) => logger?.debug({ migration: msg }, 'migrate'),
      verbose: false,
    });
    return ran.map((m) => m.name);
  } finally {
    await client.end();
  }
}
