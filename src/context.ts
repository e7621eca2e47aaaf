/**
 * Builds everything one service instance needs from its configuration: the database (the
 * embedded one when none is configured), migrations, sources, keys, cache. `main.ts` serves it;
 * tests build one against their own database.
 */
import path from 'node:path';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import type pg from 'pg';
import { openDatabase, type Database } from './db/pool.js';
import { openReaderPool } from './db/readerPool.js';
import { migrateUp } from './db/migrate.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded.js';
import { SourceService } from './sources/service.js';
import { ApiKeyRepository } from './auth/keys.js';
import { Authenticator } from './auth/authenticate.js';
import { LogWriter } from './ingest/write.js';
import { createMetrics, type Metrics } from './metrics.js';
import { PROJECT_ROOT } from './paths.js';
import { EndpointRepository } from './endpoints/repository.js';
import { ensureSeededEndpoints } from './seed.js';
import type { ResultCache } from './cache/types.js';
import { createResultCache } from './cache/index.js';

export interface AppContext {
  readonly config: Config;
  readonly logger: Logger;
  readonly db: Database;
  readonly sources: SourceService;
  readonly keys: ApiKeyRepository;
  readonly auth: Authenticator;
  readonly writer: LogWriter;
  readonly metrics: Metrics;
  /** Result cache (src/cache/): Redis when REDIS_URL is set, else in-process. */
  readonly cache: ResultCache;
  /**
   * Connections logged in as the reader role, for endpoint queries (src/db/readerPool.ts);
   * undefined where that is not possible (then queries use SET LOCAL ROLE on `db.pool`).
   * Use only through executeReadOnly: its sessions must keep their startup settings.
   */
  readonly reader: pg.Pool | undefined;
  /** True when running on the embedded database. */
  readonly embedded: boolean;
  close(): Promise<void>;
}

export async function createContext(config: Config, logger: Logger): Promise<AppContext> {
  let embedded: EmbeddedPostgres | undefined;
  let url = config.databaseUrl;
  if (!url) {
    const dataDir = path.resolve(PROJECT_ROOT, config.dataDir);
    embedded = await startEmbeddedPostgres({ dataDir, log: (msg) => logger.debug(msg) });
    url = embedded.url;
    logger.info({ dataDir, url }, 'no DATABASE_URL: using the embedded Postgres (PGlite); psql can connect to url');
  }

  try {
    await migrateUp(url, logger);
  } catch (err) {
    await embedded?.stop();
    throw err;
  }

  const db = openDatabase({ url, poolSize: config.dbPoolSize, connectTimeoutMs: config.dbConnectTimeoutMs, logger });
  const sources = new SourceService(db, config.retentionDays);
  const keys = new ApiKeyRepository(db.knex);
  await sources.ensureDefaults();
  for (const k of config.bootstrapKeys) await keys.upsert(k.name, k.key, k.scopes);
  await ensureSeededEndpoints(new EndpointRepository(db.knex));
  const metrics = createMetrics();
  const cache = await createResultCache(config, metrics, logger);
  let reader: pg.Pool | undefined;
  if (!embedded) {
    const opened = await openReaderPool(db, { poolSize: config.dbPoolSize, connectTimeoutMs: config.dbConnectTimeoutMs, logger, statementTimeoutMs: config.queryTimeoutMs });
    if ('unavailable' in opened) logger.warn(`endpoint queries will use SET LOCAL ROLE: ${opened.unavailable}`);
    else reader = opened;
  }

  return {
    config,
    logger,
    db,
    sources,
    keys,
    auth: new Authenticator(keys),
    writer: new LogWriter(db.pool, sources, logger),
    metrics,
    cache,
    reader,
    embedded: embedded !== undefined,
    async close() {
      await cache.close();
      await reader?.end().catch(() => undefined);
      await db.close();
      await embedded?.stop();
    },
  };
}
