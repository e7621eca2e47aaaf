import cron from 'node-cron';
import type { AppContext } from './context.js';

/**
 * Background upkeep: partitions ahead and retention, at start and every hour. Idempotent,
 * so several replicas may run it; the DDL is guarded by IF [NOT] EXISTS.
 */
export function startBackgroundJobs(ctx: AppContext): { stop(): void } {
  const upkeep = async () => {
    try {
      const { created, dropped } = await ctx.sources.runPartitionUpkeep();
      if (dropped.length) ctx.writer.forgetPartitions();
      if (created || dropped.length) ctx.logger.info({ created, dropped }, 'partition upkeep');
    } catch (err) {
      ctx.logger.warn({ err: (err as Error).message }, 'partition upkeep failed; will retry next hour');
    }
  };
  void upkeep();
  const hourly = cron.schedule('7 * * * *', upkeep);
  const catalog = setInterval(() => void ctx.sources.reload().catch(() => undefined), 10_000);
  catalog.unref();
  return {
    stop() {
      void hourly.stop();
      clearInterval(catalog);
    },
  };
}
