/**
 * The alert scheduler (docs/ALERTS.md, "Schedule"): on every tick (node-cron, ALERT_TICK) each
 * enabled alert whose cron came due since it was created is run once for its latest due time, by
 * exactly one of all the service's processes.
 *
 * - "Exactly one": as the cache warmer's lock (src/cache/warmer.ts), the claim is named by the
 *   due time, which every process computes alike, and is taken only if absent; here it is the
 *   run's row, unique per (alert, due time), so the claim is also the history entry and outlives
 *   any process (and needs no Redis: without REDIS_URL the processes share only the database).
 * - A process restarted mid-run: its run's lease (ALERT_RUN_LEASE_MS, renewed while it runs) runs
 *   out, and one process takes the run over and carries it on from its last recorded step
 *   (AlertService.execute): it is not run twice, and not skipped.
 * - A process that was down when a time came due runs it when it is back (within a day,
 *   CATCH_UP_MS); several missed times of one alert give one run, for the latest.
 */
import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../logger.js';
import type { AlertService } from './service.js';
import type { AlertRecord, AlertRunRecord } from './repository.js';
import { cronProblem, cronSchedule } from './schedule.js';

export interface SchedulerOptions {
  tick: string;
  leaseMs: number;
  /** Runs carried on at once by one process. */
  concurrency?: number;
  now?: () => number;
}

export class AlertScheduler {
  private task: ScheduledTask | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly service: AlertService,
    private readonly logger: Logger,
    private readonly options: SchedulerOptions,
  ) {}

  start(): void {
    if (this.task || this.stopped) return;
    this.task = cron.schedule(this.options.tick, () => void this.tick(), { name: 'alerts' });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.task?.stop();
    await this.task?.destroy();
    this.task = undefined;
    await this.running;
  }

  /** One pass; overlapping ticks are skipped. Exposed for tests. */
  tick(now = (this.options.now ?? Date.now)()): Promise<void> {
    if (this.running || this.stopped) return this.running ?? Promise.resolve();
    this.running = this.pass(now)
      .catch((err) => this.logger.warn({ err: (err as Error).message }, 'alert scheduler pass failed; next tick retries'))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private async pass(now: number): Promise<void> {
    const { alerts, runs, owner } = this.service;
    const work: Array<{ run: AlertRunRecord; alert: AlertRecord }> = [];
    const enabled = await alerts.listEnabled();
    for (const alert of enabled) {
      if (cronProblem(alert.cron)) continue; // saved before a rule changed: not run, GET still shows it
      const due = cronSchedule(alert.cron).latestDue(now);
      if (due === undefined || due < new Date(alert.created_at).getTime()) continue;
      const run = await runs.claimTick(alert.id, new Date(due), owner, this.options.leaseMs);
      if (run) work.push({ run, alert });
    }
    // Runs whose process stopped renewing their lease.
    for (
      let taken = await runs.takeOverStale(owner, this.options.leaseMs);
      taken;
      taken = await runs.takeOverStale(owner, this.options.leaseMs)
    ) {
      const alert = await alerts.find(taken.alert_id);
      if (alert) {
        this.logger.info({ alert: alert.name, run: taken.id }, 'alert run resumed from a process that stopped');
        work.push({ run: taken, alert });
      }
      if (this.stopped) break;
    }
    let next = 0;
    const worker = async () => {
      while (next < work.length) {
        const { run, alert } = work[next++];
        await this.service.execute(run, alert);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency ?? 4, work.length) }, worker));
  }
}
