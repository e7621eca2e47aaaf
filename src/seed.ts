import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { generateKey } from './auth/keys.js';
import { PROJECT_ROOT } from './paths.js';
import type pg from 'pg';
import type { ApiKeyRepository } from './auth/keys.js';
import type { LogWriter } from './ingest/write.js';
import type { Logger } from './logger.js';
import type { SourceService } from './sources/service.js';
import { EndpointRepository } from './endpoints/repository.js';
import { dependants } from './endpoints/nesting.js';
import type { SourceLookup } from './sources/schema.js';
import type { Knex } from 'knex';
import { normaliseEvents } from './ingest/normalise.js';
import { SEEDED_ENDPOINTS, SUPERSEDED_SEEDED_QUERIES } from '../seeds/endpoints.js';
import { demoEvents } from '../seeds/demo-events.js';

/**
 * Creates the two seeded endpoints where missing, and upgrades one still at a query an earlier
 * release seeded (an operator's own changes are kept).
 */
export async function ensureSeededEndpoints(knex: Knex, sources: SourceLookup): Promise<void> {
  const endpoints = new EndpointRepository(knex);
  for (const fields of SEEDED_ENDPOINTS) {
    const existing = await endpoints.find(fields.name);
    if (existing) {
      const digest = createHash('sha256').update(existing.query).digest('hex');
      if (!SUPERSEDED_SEEDED_QUERIES[fields.name]?.includes(digest)) continue;
      await knex.transaction(async (trx) => {
        const repository = new EndpointRepository(trx);
        await repository.update(existing.id, { query: fields.query, parameters: fields.parameters, description: fields.description });
        // Endpoints that read it (docs/API.md, "Endpoints that read endpoints") get a new version
        // too, so no result cached from the old query is served for them. Their parameters stay:
        // an upgrade adds no parameter to a seeded endpoint.
        for (const reader of dependants(await repository.list(), fields.name, sources)) await repository.update(reader.id, {});
      });
      continue;
    }
    try {
      await endpoints.insert(fields);
    } catch (err) {
      if ((err as { code?: string }).code !== '23505') throw err; // another replica seeded it first
    }
  }
}

/** On the first start of an instance configured for it (the embedded default), the demo events. */
export async function loadDemoDataOnce(deps: {
  sources: Pick<SourceService, 'get'>;
  pool: Pick<pg.Pool, 'query'>;
  writer: Pick<LogWriter, 'write'>;
  logger: Logger;
}): Promise<void> {
  const { sources, pool, writer, logger } = deps;
  const edge = await sources.get('cloudflare.logs.prod');
  const { rows } = await pool.query(`SELECT EXISTS (SELECT 1 FROM logs."${edge.table_name}") AS any`);
  if (rows[0].any) return;
  const nowMs = Date.now();
  let total = 0;
  for (const [sourceName, events] of demoEvents(nowMs)) {
    const source = await sources.get(sourceName);
    const batch = normaliseEvents(events, { nowMs, retentionDays: source.retention_days });
    if (batch.errors.length) throw new Error(`demo events of ${sourceName} are invalid: ${batch.errors[0]!.message}`);
    await writer.write(source, batch.rows, batch.fields);
    total += batch.rows.length;
  }
  logger.info({ events: total }, 'loaded demo events');
}

/**
 * On the embedded default with no key at all, a newcomer could not call anything: create one
 * admin key and write it to `<data dir>/admin-api-key` (mode 600) rather than to the log.
 * Returns the file's path when a key was created.
 */
export async function ensureFirstKey(deps: {
  embedded: boolean;
  keys: Pick<ApiKeyRepository, 'list' | 'create'>;
  dataDir: string;
}): Promise<string | undefined> {
  const { embedded, keys, dataDir } = deps;
  if (!embedded || (await keys.list()).length > 0) return undefined;
  const key = generateKey();
  const file = path.join(path.resolve(PROJECT_ROOT, dataDir), 'admin-api-key');
  await fs.writeFile(file, key + '\n', { mode: 0o600 });
  await keys.create('first-admin', key, ['admin']);
  return file;
}
