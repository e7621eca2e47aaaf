/**
 * Cache warming: on every tick (node-cron, `config.warmingTick`), each live key whose due time has
 * come is re-run by exactly one process per period, and stored with a fresh lifetime.
 *
 * - "Exactly one": the run takes `warm:<key>:<period>` with SET NX, where the period number is
 *   derived from the key's due time; every process reads the same due time, so only one wins,
 *   and the winner moves the due time one period on (in step with the schedule, so N periods
 *   give N runs even though ticks are coarser than periods).
 * - A key nobody requested during its lifetime (ttl since the last request) is dropped.
 * - A run that rejects (endpoint changed or deleted, query failing) drops the key; a request for
 *   it registers it again.
 */
import cron, { type ScheduledTask } from 'node-cron';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { extraPutMs, type StoreGuard } from './guard.js';
import type { CacheStore, DueKey, LiveEntry } from './store.js';
import type { WarmRunner } from './types.js';

export interface WarmerOptions {
  /** node-cron expression (seconds field allowed). */
  tick: string;
  /** Multiplies every key's warming period. */
  scale: number;
  /** At most this many keys are re-run at once by one process. */
  concurrency?: number;
  /** At most this many due keys are looked at per tick. */
  batch?: number;
  /** The clock due times and lifetimes are read from; tests pass one they move by hand. */
  now?: () => number;
}

export class Warmer {
  private task: ScheduledTask | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly store: CacheStore,
    private readonly guard: StoreGuard,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly options: WarmerOptions,
    private readonly run: WarmRunner,
  ) {}

  /** The warming period of an entry in ms, after scaling. */
  periodMs(entry: Pick<LiveEntry, 'warmPeriodSeconds'>): number {
    return Math.max(1, Math.round(entry.warmPeriodSeconds * this.options.scale * 1000));
  }

  start(): void {
    if (this.task || this.stopped) return;
    this.task = cron.schedule(
      this.options.tick,
      () => {
        void this.tick();
      },
      { name: 'cache-warming' },
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.task?.stop();
    await this.task?.destroy();
    this.task = undefined;
    await this.running;
  }

  /** One pass over the due keys; overlapping ticks are skipped. Exposed for tests. */
  tick(now = (this.options.now ?? Date.now)()): Promise<void> {
    if (this.running || this.stopped) return this.running ?? Promise.resolve();
    this.running = this.pass(now)
      .catch((err) => this.logger.warn({ err: (err as Error).message }, 'cache warming pass failed'))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private async pass(now: number): Promise<void> {
    const due = await this.guard.run(() => this.store.dueKeys(now, this.options.batch ?? 200));
    if (!due.ok || due.value.length === 0) return;
    const keys = due.value.map((d) => d.key);
    const entries = await this.guard.run(() => this.store.liveEntries(keys));
    if (!entries.ok) return;

    const stale: string[] = [];
    const work: Array<DueKey & { entry: LiveEntry }> = [];
    due.value.forEach((d, i) => {
      const live = entries.value[i];
      if (!live || now - live.seenAt > live.entry.ttlSeconds * 1000) stale.push(d.key);
      else work.push({ ...d, entry: live.entry });
    });
    if (stale.length) {
      await this.guard.run(() => this.store.drop(stale));
      this.logger.debug({ keys: stale.length }, 'cache warming: dropped keys nobody requested during their lifetime');
    }

    let next = 0;
    const worker = async () => {
      while (next < work.length && !this.stopped) await this.warmOne(work[next++], now);
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency ?? 4, work.length) }, worker));
  }

  private async warmOne(item: DueKey & { entry: LiveEntry }, now: number): Promise<void> {
    const periodMs = this.periodMs(item.entry);
    const period = Math.floor(item.due / periodMs);
    const lock = await this.guard.run(() => this.store.lock(`warm:${item.key}:${period}`, randomUUID(), Math.max(2 * periodMs, 10_000)));
    if (!lock.ok || !lock.value) return; // another process warms it in this period
    const nextDue = item.due + periodMs > now ? item.due + periodMs : now + periodMs;
    await this.guard.run(() => this.store.reschedule(item.key, nextDue));

    let body: string;
    try {
      body = await this.run(item.entry.spec);
    } catch (err) {
      this.metrics.cacheEvents.inc({ event: 'warm_failure' });
      this.logger.info(
        { endpointId: item.entry.spec.endpointId, version: item.entry.spec.version, err: (err as Error).message },
        'cache warming: run failed; key no longer warmed',
      );
      await this.guard.run(() => this.store.drop([item.key]));
      return;
    }
    await this.guard.run(() => this.store.put(item.key, body, item.entry.ttlSeconds), extraPutMs(body));
    this.metrics.cacheEvents.inc({ event: 'warm_run' });
  }
}
