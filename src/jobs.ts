import cron from 'node-cron';
import type { LogWriter } from './ingest/write.js';
import type { Logger } from './logger.js';
import type { SourceService } from './sources/service.js';

export interface JobDeps {
  sources: Pick<SourceService, 'runPartitionUpkeep' | 'reload' | 'runHotLeafBackfill' | 'runIndexUpkeep'>;
  writer: Pick<LogWriter, 'forgetPartitions'>;
  logger: Logger;
}

/**
 * Background upkeep: partitions ahead and retention, at start and every hour (idempotent, so
 * several replicas may run it; the DDL is guarded by IF [NOT] EXISTS), and the source catalog
 * read again every 10 s so changes made by other replicas are seen; hot leaf backfills and
 * then index upkeep (covering indexes, src/storage/indexUpkeep.ts) every minute.
 */
export function startBackgroundJobs(ctx: JobDeps, options: { catalogReloadMs?: number } = {}): { stop(): void } {
  const upkeep = async () => {
    try {
      const { created, dropped } = await ctx.sources.runPartitionUpkeep();
      if (dropped.length) ctx.writer.forgetPartitions();
      if (created || dropped.length) ctx.logger.info({ created, dropped }, 'partition upkeep');
    } catch (err) {
      ctx.logger.warn({ err: (err as Error).message }, 'partition upkeep failed; will retry next hour');
    }
  };
  // Hot leaves declared on a source with data: their columns filled partition by partition.
  let backfilling = false;
  const backfill = async () => {
    if (backfilling) return;
    backfilling = true;
    try {
      const filled = await ctx.sources.runHotLeafBackfill();
      if (filled.length) ctx.logger.info({ partitions: filled }, 'hot leaf backfill');
    } catch (err) {
      ctx.logger.warn({ err: (err as Error).message }, 'hot leaf backfill failed; will retry in a minute');
    } finally {
      backfilling = false;
    }
  };
  // After the backfill: a partition is indexed once its backfill is done (src/storage/indexUpkeep.ts).
  let indexing = false;
  const indexUpkeep = async () => {
    if (indexing) return;
    indexing = true;
    try {
      const done = await ctx.sources.runIndexUpkeep();
      if (done.length) ctx.logger.info({ done }, 'index upkeep');
    } catch (err) {
      ctx.logger.warn({ err: (err as Error).message }, 'index upkeep failed; will retry in a minute');
    } finally {
      indexing = false;
    }
  };
  const minutely = () => backfill().then(indexUpkeep);
  void upkeep().then(minutely);
  const everyMinute = setInterval(() => void minutely(), 60_000);
  everyMinute.unref();
  const hourly = cron.schedule('7 * * * *', upkeep);
  const reloadMs = options.catalogReloadMs ?? 10_000;
  const reloadCatalog = () =>
    ctx.sources
      .reload()
      .catch((err: Error) => ctx.logger.warn({ err: err.message }, `source catalog reload failed; retrying in ${reloadMs / 1000} s`));
  const catalog = setInterval(() => void reloadCatalog(), reloadMs);
  catalog.unref();
  return {
    stop() {
      void hourly.stop();
      clearInterval(catalog);
      clearInterval(everyMinute);
    },
  };
}
