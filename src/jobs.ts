import cron from 'node-cron';
import type { LogWriter } from './ingest/write.js';
import type { Logger } from './logger.js';
import type { SourceService } from './sources/service.js';
import type { SourceUpkeep } from './upkeep/sourceUpkeep.js';
import type { Config } from './config.js';
import type { AlertService } from './alerts/service.js';
import { AlertScheduler } from './alerts/scheduler.js';
import type { HourlyBackground } from './query/hourlyBackground.js';

export interface JobDeps {
  sources: Pick<SourceService, 'reload'>;
  upkeep: Pick<SourceUpkeep, 'runPartitionUpkeep' | 'runHotLeafBackfill' | 'runIndexUpkeep'>;
  writer: Pick<LogWriter, 'forgetPartitions'>;
  logger: Logger;
  /** With both, the alert scheduler runs (src/alerts/scheduler.ts). */
  alerts?: AlertService;
  config?: Pick<Config, 'alertTick' | 'alertRunLeaseMs'>;
  /** With the hourly split: the hours that just closed computed in the background (src/query/hourlyBackground.ts). */
  hourlyBackground?: Pick<HourlyBackground, 'tick'>;
}

/**
 * Background upkeep: partitions ahead and retention, at start and every hour (idempotent, so
 * several replicas may run it; the DDL is guarded by IF [NOT] EXISTS), and the source catalog
 * read again every 10 s so changes made by other replicas are seen; hot leaf backfills and
 * then index upkeep (covering indexes, src/storage/indexUpkeep.ts) every minute; alerts on their
 * schedules (src/alerts/scheduler.ts: each due time run once across processes); with the hourly
 * split, every minute, the hours that just closed (one process at a time, src/query/hourlyBackground.ts).
 */
export function startBackgroundJobs(ctx: JobDeps, options: { catalogReloadMs?: number } = {}): { stop(): void } {
  const upkeep = async () => {
    try {
      const { created, dropped } = await ctx.upkeep.runPartitionUpkeep();
      if (dropped.length) ctx.writer.forgetPartitions();
      if (created || dropped.length) ctx.logger.info({ created, dropped }, 'partition upkeep');
    } catch (err) {
      ctx.logger.warn({ err: (err as Error).message }, 'partition upkeep failed; will retry next hour');
    }
  };
  // Hot leaves declared on a source with data: their columns filled partition by partition.
  const backfill = minuteJob(ctx.logger, 'hot leaf backfill', 'partitions', () => ctx.upkeep.runHotLeafBackfill());
  // After the backfill: a partition is indexed once its backfill is done (src/storage/indexUpkeep.ts).
  const indexUpkeep = minuteJob(ctx.logger, 'index upkeep', 'done', () => ctx.upkeep.runIndexUpkeep());
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
  const alerts =
    ctx.alerts && ctx.config
      ? new AlertScheduler(ctx.alerts, ctx.logger, { tick: ctx.config.alertTick, leaseMs: ctx.config.alertRunLeaseMs })
      : undefined;
  alerts?.start();
  const background = ctx.hourlyBackground;
  const closedHours = background ? setInterval(() => void background.tick(), 60_000) : undefined;
  closedHours?.unref();
  return {
    stop() {
      clearInterval(closedHours);
      void alerts?.stop();
      void hourly.stop();
      clearInterval(catalog);
      clearInterval(everyMinute);
    },
  };
}

/**
 * A job run every minute that never overlaps itself (a run may take longer than a minute): what
 * it did is logged under `field` when anything, a failure is logged and the next minute retries.
 */
function minuteJob(logger: JobDeps['logger'], name: string, field: string, run: () => Promise<string[]>): () => Promise<void> {
  let running = false;
  return async () => {
    if (running) return;
    running = true;
    try {
      const done = await run();
      if (done.length) logger.info({ [field]: done }, name);
    } catch (err) {
      logger.warn({ err: (err as Error).message }, `${name} failed; will retry in a minute`);
    } finally {
      running = false;
    }
  };
}
