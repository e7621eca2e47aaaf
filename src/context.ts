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
import { SourceUpkeep } from './upkeep/sourceUpkeep.js';
import { EndpointRepository } from './endpoints/repository.js';
import { sourceReaders } from './endpoints/nesting.js';
import { ApiKeyRepository } from './auth/keys.js';
import { Authenticator } from './auth/authenticate.js';
import { LogWriter } from './ingest/write.js';
import { defaultSourceSchema } from './ingest/defaultSchemas.js';
import { createMetrics, registerSchedulerGauges, type Metrics } from './metrics.js';
import { PROJECT_ROOT } from './paths.js';
import { ensureSeededEndpoints } from './seed.js';
import type { ResultCache } from './cache/types.js';
import { createResultCache } from './cache/index.js';
import { HourlyStore } from './query/hourlyStore.js';
import { catalogSourceOf, HourlyBackground } from './query/hourlyBackground.js';
import { executeReadOnly } from './query/execute.js';
import { ReplicaRouter, type QueryTarget } from './db/replicas.js';
import { KeyLimiter } from './rateLimit/index.js';
import { splitDatabaseUrl, withSearchPath } from './db/databaseUrl.js';
import { PrimaryLocator } from './db/primary.js';
import { AlertService } from './alerts/service.js';
import { DestinationPolicy } from './alerts/destinations.js';
import { Arrivals, RedisArrivalRelay } from './lql/arrivals.js';

export interface AppContext {
  readonly config: Config;
  readonly logger: Logger;
  readonly db: Database;
  readonly sources: SourceService;
  /** Partitions, retention, hot-leaf backfill and index upkeep of every source (src/upkeep/sourceUpkeep.ts). */
  readonly upkeep: SourceUpkeep;
  readonly keys: ApiKeyRepository;
  readonly auth: Authenticator;
  readonly writer: LogWriter;
  /** Write versions and partials of the hourly split (src/query/hourlyStore.ts); only with Redis. */
  readonly hourly?: HourlyStore;
  /** The hourly split's background work (src/query/hourlyBackground.ts); with `hourly`. */
  readonly hourlyBackground?: HourlyBackground;
  readonly metrics: Metrics;
  /** Result cache (src/cache/): Redis when REDIS_URL is set, else in-process. */
  readonly cache: ResultCache;
  /**
   * Connections logged in as the reader role, for endpoint queries (src/db/readerPool.ts);
   * undefined where that is not possible (then queries use SET LOCAL ROLE on `db.pool`).
   * Use only through executeReadOnly: its sessions must keep their startup settings.
   */
  readonly reader: pg.Pool | undefined;
  /**
   * Where endpoint queries run: a healthy read replica (DATABASE_READ_URLS), else the primary
   * (`reader` when there is one). Only endpoint queries go through it (src/db/replicas.ts).
   */
  readonly reads: ReplicaRouter;
  /** Request rate, query-time budget and concurrent queries per API key (src/rateLimit/), shared through Redis when configured. */
  readonly limiter: KeyLimiter;
  /** True when running on the embedded database. */
  readonly embedded: boolean;
  /**
   * The "new events" signal of live tail (src/lql/arrivals.ts): the ingest writer's, shared with
   * the other processes through Redis pub/sub when REDIS_URL is set.
   */
  readonly arrivals: Arrivals;
  /** Alerts (src/alerts/): their management and runs; the scheduler is a background job (src/jobs.ts). */
  readonly alerts: AlertService;
  close(): Promise<void>;
}

export interface ContextOptions {
  /**
   * The clock of the per-key limits decided in this process (request windows, query-time budget)
   * and of the key lookups' lifetimes; each its own default (Date.now, performance.now) unless a test moves one.
   */
  now?: () => number;
}

export async function createContext(config: Config, logger: Logger, { now }: ContextOptions = {}): Promise<AppContext> {
  // What is open so far, closed in reverse order by close() or when a later step fails (a failed
  // start must not leave pools, a Redis client or the embedded database open in this process).
  const opened: Array<{ name: string; close(): Promise<void> }> = [];
  try {
    let embedded: EmbeddedPostgres | undefined;
    // The service's own tables in their schema (DATABASE_SCHEMA): every connection's search_path.
    let url = config.databaseUrl && withSearchPath(config.databaseUrl, config.databaseSchema);
    if (!url) {
      const dataDir = path.resolve(PROJECT_ROOT, config.dataDir);
      const started = await startEmbeddedPostgres({ dataDir, log: (msg) => logger.debug(msg) });
      embedded = started;
      opened.push({ name: 'embedded database', close: () => started.stop() });
      url = embedded.url;
      logger.info({ dataDir, url }, 'no DATABASE_URL: using the embedded Postgres (PGlite); psql can connect to url');
    }

    const metrics = createMetrics();
    // HA mode: DATABASE_URL lists several hosts (or asks for the read-write one); the service
    // follows whichever is the primary (src/db/primary.ts). Its standbys serve endpoint queries
    // unless DATABASE_READ_URLS names other replicas.
    const hosts = splitDatabaseUrl(url);
    let primary: PrimaryLocator | undefined;
    if (hosts.findPrimary) {
      const locator = new PrimaryLocator({
        urls: hosts.urls,
        checkTimeoutMs: Math.min(config.dbConnectTimeoutMs, 2000),
        registry: metrics.registry,
        logger,
      });
      primary = locator;
      opened.push({ name: 'primary search', close: () => locator.close() });
      url = await locator.start();
      logger.info({ hosts: hosts.urls.length }, 'DATABASE_URL lists several hosts: writes follow the primary');
    }

    await migrateUp(url, logger, config.databaseSchema);

    const db = await openDatabase({ url, poolSize: config.dbPoolSize, connectTimeoutMs: config.dbConnectTimeoutMs, logger, primary });
    opened.push({ name: 'database pools', close: () => db.close() });
    // Before sources: deleting a source and retention's drops invalidate the hours they remove rows from.
    const hourly = config.redisUrl && config.hourlySplit ? await HourlyStore.open(config.redisUrl, { logger }) : undefined;
    if (hourly) opened.push({ name: 'hourly partials', close: () => hourly.close() });
    const sources = new SourceService(
      db,
      config.retentionDays,
      async (name) => sourceReaders(await new EndpointRepository(db.knex).list(), name),
      // A changed hot leaf or search_index: the indexes now, rather than at the next minute's job.
      (sourceId) => void upkeep.upkeepIndexesOf(sourceId).catch(() => undefined),
      hourly,
    );
    const upkeep = new SourceUpkeep(db, sources, hourly);
    const keys = new ApiKeyRepository(db.knex);
    await sources.ensureDefaults(defaultSourceSchema);
    await upkeep.adoptUncheckedHotLeaves();
    for (const k of config.bootstrapKeys) await keys.upsert(k.name, k.key, k.scopes);
    await ensureSeededEndpoints(db.knex, sources.lookup);
    let reader: pg.Pool | undefined;
    if (!embedded) {
      const opening = await openReaderPool(db, {
        poolSize: config.dbPoolSize,
        connectTimeoutMs: config.dbConnectTimeoutMs,
        logger,
        statementTimeoutMs: config.queryTimeoutMs,
      });
      if ('unavailable' in opening) logger.warn(`endpoint queries will use SET LOCAL ROLE: ${opening.unavailable}`);
      else {
        reader = opening;
        opened.push({ name: 'reader pool', close: () => opening.end() });
      }
    }
    const primaryTarget: QueryTarget = reader
      ? { name: 'primary', pool: reader, useReaderRole: false } // logged in as the reader already
      : { name: 'primary', pool: db.pool, useReaderRole: db.capabilities.readerRole };
    if (!reader && !primaryTarget.useReaderRole)
      logger.warn('this database cannot switch to the reader role; endpoint queries rely on the two other sandbox walls');
    const reads = new ReplicaRouter(primaryTarget, {
      urls: config.databaseReadUrls.length || !primary ? config.databaseReadUrls : hosts.urls,
      primaryUrl: url,
      primaryPool: db.pool,
      maxLagMs: config.maxReplicaLagMs,
      checkIntervalMs: config.replicaCheckIntervalMs,
      pool: { poolSize: config.dbPoolSize, connectTimeoutMs: config.dbConnectTimeoutMs, logger },
      statementTimeoutMs: config.queryTimeoutMs,
      registry: metrics.registry,
      logger,
    });
    opened.push({ name: 'read replicas', close: () => reads.close() });
    await reads.start();
    // A promoted standby leaves the read pool at once, not at the next replica check.
    primary?.onChange(() => void reads.recheck());
    const cache = await createResultCache(config, metrics, logger);
    opened.push({ name: 'cache', close: () => cache.close() });
    const limiter = KeyLimiter.open(config, logger, undefined, now);
    opened.push({ name: 'rate limits', close: () => limiter.close() });
    registerSchedulerGauges(metrics.registry, () => limiter.load);
    const arrivals = new Arrivals();
    // Pieces run as endpoint queries do (queryService.ts execute), at the scheduler's background
    // priority, and always on the primary: what a read replica computes may lag behind a version
    // bump and is never kept, so background work there would be thrown away.
    const hourlyBackground =
      hourly &&
      new HourlyBackground(hourly, {
        run: (sql, values, o) =>
          limiter.background((grant) =>
            executeReadOnly(primaryTarget.pool, sql, values, {
              timeoutMs: config.queryTimeoutMs,
              serial: grant.serial,
              useReaderRole: primaryTarget.useReaderRole,
              pipelined: db.capabilities.pipelinedBatch,
              workMemKb: o?.workMemKb,
            }),
          ),
        sourceOf: catalogSourceOf(sources),
        metrics,
        logger,
      });
    if (hourlyBackground) opened.push({ name: 'hourly background', close: async () => hourlyBackground.close() });
    if (config.redisUrl) {
      const relay = await RedisArrivalRelay.open({ url: config.redisUrl, arrivals, logger });
      opened.push({ name: 'live tail relay', close: () => relay.close() });
    }

    return {
      config,
      logger,
      db,
      sources,
      upkeep,
      keys,
      auth: new Authenticator(keys, { unknownKeyLookupsPerMinute: config.unknownKeyLookupsPerMinute, now }),
      writer: new LogWriter(db.pool, sources, logger, db.capabilities, hourly),
      hourly,
      hourlyBackground,
      metrics,
      cache,
      reader,
      reads,
      limiter,
      embedded: embedded !== undefined,
      arrivals,
      alerts: new AlertService({
        knex: db.knex,
        sources: sources.lookup,
        reads,
        queryTimeoutMs: config.queryTimeoutMs,
        pipelined: db.capabilities.pipelinedBatch,
        policy: new DestinationPolicy(config.alertWebhookHosts),
        minIntervalSeconds: config.alertMinIntervalSeconds,
        delivery: {
          timeoutMs: config.alertDeliveryTimeoutMs,
          attempts: config.alertDeliveryAttempts,
          backoffMs: config.alertRetryBackoffMs,
        },
        leaseMs: config.alertRunLeaseMs,
        logger,
      }),
      close: () => closeAll(opened),
    };
  } catch (err) {
    await closeAll(opened).catch((closeErr: Error) =>
      logger.error({ err: closeErr.message }, 'start failed, and closing what it had opened failed too'),
    );
    throw err;
  }
}

/**
 * Closes everything in `opened` in reverse order (each once: a second call does nothing), going
 * on past a failure; rejects afterwards naming what failed.
 */
async function closeAll(opened: Array<{ name: string; close(): Promise<void> }>): Promise<void> {
  const failures: string[] = [];
  for (const resource of opened.splice(0).reverse()) {
    try {
      await resource.close();
    } catch (err) {
      failures.push(`${resource.name}: ${(err as Error)?.message ?? String(err)}`);
    }
  }
  if (failures.length) throw new Error(`closing failed: ${failures.join('; ')}`);
}
