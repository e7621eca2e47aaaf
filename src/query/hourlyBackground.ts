/**
 * The hourly split's background work (docs/ARCHITECTURE.md "Hourly partials"): hours computed and
 * kept outside of any user's load, each piece at the query scheduler's lowest priority
 * (KeyLimiter.background, src/rateLimit/scheduler.ts: a free slot only while no user query that
 * could take one waits, one background query at a time over all processes, no parallel workers).
 *
 * - Fills: a load that found most of its closed hours missing ran whole (src/query/hourlySplit.ts);
 *   its missing hours are queued here and computed afterwards, so the next load reads them.
 * - Hours as they close: every load that splits registers its shape (partial SQL and non-window
 *   values) in Redis, at most once a minute per shape and process, so all processes share one
 *   list. Each `tick` (every minute, src/jobs.ts), the one process that takes the Redis lock
 *   computes, for the MAX_SHAPES shapes asked for most recently within SHAPE_RECENT_MS, those of
 *   the last LOOKBACK_HOURS closed hours not kept: a report's next load finds all its closed hours.
 *
 * - Studio's reports kept warm: with a warm-up (src/query/reportWarmup.ts), each tick also registers
 *   the shapes of Studio's report queries for the busiest projects, ranked behind the shapes loads
 *   asked for, and fills their last days when due: a report's first load finds its hours kept.
 *
 * Bounded: a piece is at most PIECE_HOURS hours (one query; between two pieces a user query that
 * waits goes first), at most MAX_QUEUED shapes wait, at most MAX_SHAPES are looked at a tick; what
 * is left out is counted in logquery_hourly_events_total (fills_dropped, shapes_skipped).
 */
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { SourceService } from '../sources/service.js';
import { validatePostgres } from '../sql/validate.js';
import { logTableName } from '../storage/logTables.js';
import { SHAPE_RECENT_MS, type HourlyStore } from './hourlyStore.js';
import { fillHours, lastClosedHours, shapeHash, type Runner, type Shape, type SourceOf } from './hourlySplit.js';
import type { ReportWarmup } from './reportWarmup.js';

/** Hours of one background query at most: on lq_bench_10m the API report's largest query reads ~60k events an hour. */
const PIECE_HOURS = 6;
/** Shapes whose fills may wait at once; more are dropped (and counted): their next load finds the hours missing again. */
const MAX_QUEUED = 256;
/**
 * Shapes whose new hours a tick computes, the most recently asked for first: room for the warm
 * shapes of Studio's reports (reportWarmup.ts: ~38 queries × 3 projects, ranked last) beside 100
 * that users asked for. Each costs a few EXISTS a tick and one piece an hour.
 */
export const MAX_SHAPES = 250;
/** The closed hours a tick looks at: the one that just closed, and two more in case ticks were missed or a late event changed one. */
const LOOKBACK_HOURS = 3;
/** A shape is registered again after this long (its last request moves forward). */
const REGISTER_EVERY_MS = 60_000;
/** Shapes this process remembers registering (beyond, the oldest is forgotten and registered again at its next load). */
const REGISTERED_MAX = 10_000;
/** The tick's lock: past it (a process that died) another process takes over; a longer run only repeats work. */
const LOCK_MS = 10 * 60_000;

/** The split's view of the source catalog: a plan's table (`logs.<table_name>`) to its source's id and retention. */
export function catalogSourceOf(sources: Pick<SourceService, 'list'>): SourceOf {
  return (table) => {
    const source = sources.list().find((s) => logTableName(s.table_name) === table);
    return source && { id: source.id, retentionDays: source.retention_days };
  };
}

export interface BackgroundOptions {
  /** Runs one partial query at background priority (KeyLimiter.background). */
  run: Runner;
  /** The catalog: a shape whose table is not this install's source (another install sharing Redis) is left alone. */
  sourceOf: SourceOf;
  metrics?: Pick<Metrics, 'hourlyEvents'>;
  logger?: Logger;
  /** The clock (tests move their own). */
  now?: () => number;
}

export class HourlyBackground {
  readonly sourceOf: SourceOf;
  private readonly now: () => number;
  /** Fills waiting, by shape hash, oldest first. */
  private readonly queue = new Map<string, { shape: Shape; hours: Set<number> }>();
  private working: Promise<void> | undefined;
  /** Shape hash → when this process last registered it. */
  private readonly registered = new Map<string, number>();
  /** Hashes of shapes read from Redis whose SQL passed wall 2 (validatePostgres). */
  private readonly validated = new Set<string>();
  private closed = false;
  private warmup: Pick<ReportWarmup, 'due' | 'filled'> | undefined;

  constructor(
    readonly store: HourlyStore,
    private readonly options: BackgroundOptions,
  ) {
    this.sourceOf = options.sourceOf;
    this.now = options.now ?? Date.now;
  }

  /** A load asked for `shape`: noted in Redis for the ticks, at most once a REGISTER_EVERY_MS. */
  register(shape: Shape): void {
    const hash = shapeHash(shape);
    const now = this.now();
    const last = this.registered.get(hash);
    if (last !== undefined && now - last < REGISTER_EVERY_MS) return;
    this.registered.delete(hash); // re-inserted last: the Map's order is the order of registration
    this.registered.set(hash, now);
    if (this.registered.size > REGISTERED_MAX) this.registered.delete(this.registered.keys().next().value!);
    this.store.registerShape(hash, JSON.stringify(shape), now).catch(() => this.registered.delete(hash));
  }

  /** Keeps Studio's reports warm from the next tick on (src/query/reportWarmup.ts; wired where the endpoint service is, src/app.ts). */
  warmWith(warmup: Pick<ReportWarmup, 'due' | 'filled'>): void {
    this.warmup = warmup;
  }

  /** Queues the computation of `hours` of `shape` (those kept by then are skipped); false when it was dropped. */
  fill(shape: Shape, hours: readonly number[]): boolean {
    if (this.closed || !hours.length) return false;
    const hash = shapeHash(shape);
    let job = this.queue.get(hash);
    if (!job) {
      if (this.queue.size >= MAX_QUEUED) {
        this.count('fills_dropped', hours.length);
        return false;
      }
      job = { shape, hours: new Set() };
      this.queue.set(hash, job);
    }
    for (const h of hours) job.hours.add(h);
    this.pump();
    return true;
  }

  /** Resolves once nothing is queued or computing (tests wait on it instead of sleeping). */
  async idle(): Promise<void> {
    while (this.working) await this.working;
  }

  /**
   * The hours that just closed, for the shapes asked for lately, by the one process holding the
   * lock; resolves once they are computed (or given up).
   */
  async tick(): Promise<void> {
    if (this.closed) return;
    const now = this.now();
    const held = await this.store.lock('lock', LOCK_MS).catch(() => undefined);
    if (!held) return;
    try {
      // Parsed (and validated, a parse each) only as many as a tick computes.
      const bodies = await this.store.recentShapes(now - SHAPE_RECENT_MS);
      if (bodies.length > MAX_SHAPES) this.count('shapes_skipped', bodies.length - MAX_SHAPES);
      const hours = lastClosedHours(now, LOOKBACK_HOURS);
      for (const body of bodies.slice(0, MAX_SHAPES)) {
        const shape = this.parse(body);
        if (shape) this.fill(shape, hours);
      }
      // After the hours users' shapes need, so their pieces run first.
      await this.warm(now);
      await this.idle();
    } catch (err) {
      this.count('background_failed', 1);
      this.options.logger?.warn({ err: (err as Error).message }, 'hourly partials: the hours that just closed were not computed');
    } finally {
      await this.store.unlock('lock', held).catch(() => undefined);
    }
  }

  /**
   * Studio's reports kept warm: the warm-up's shapes registered at the rank it gives (never lowering
   * one a load gave: ZADD GT), and the days it says are due queued. A failure is counted; the tick goes on.
   */
  private async warm(now: number): Promise<void> {
    if (!this.warmup) return;
    try {
      const { register, fill } = await this.warmup.due(now);
      for (const { shape, at } of register)
        await this.store.registerShape(shapeHash(shape), JSON.stringify(shape), at, { raiseOnly: true });
      for (const { key, shape, hours } of fill) if (this.fill(shape, hours)) this.warmup.filled(key, now);
    } catch (err) {
      this.count('background_failed', 1);
      this.options.logger?.warn({ err: (err as Error).message }, "hourly partials: Studio's reports were not kept warm this tick");
    }
  }

  /** Stops taking work; what is queued is dropped, no further piece starts (a piece running ends on its own). */
  close(): void {
    this.closed = true;
    this.queue.clear();
  }

  private pump(): void {
    if (this.working) return;
    this.working = (async () => {
      for (let next = this.queue.entries().next(); !next.done && !this.closed; next = this.queue.entries().next()) {
        const [hash, { shape, hours }] = next.value;
        this.queue.delete(hash);
        await this.compute(
          shape,
          [...hours].sort((a, b) => a - b),
        );
      }
    })().finally(() => {
      this.working = undefined;
      if (this.queue.size && !this.closed) this.pump();
    });
  }

  private async compute(shape: Shape, hours: number[]): Promise<void> {
    try {
      const retention = this.sourceOf(shape.table)?.retentionDays;
      this.count(
        'hours_computed',
        await fillHours(shape, hours, this.options.run, this.store, retention, this.now(), PIECE_HOURS, () => this.closed),
      );
    } catch (err) {
      this.count('background_failed', 1);
      this.options.logger?.debug({ err: (err as Error).message }, 'hourly partials: a background piece failed; its next load computes it');
    }
  }

  /**
   * A shape from Redis, if it is this install's (its table's source has its id) and its SQL passes
   * wall 2 as every query run does (src/sql/validate.ts); undefined otherwise. Redis is trusted as
   * the result cache is (whoever can write to it can already serve any cached answer): a shape
   * runs read-only, as the reader role, on nothing but what wall 2 allows, but it is not tied to
   * the table its `table` names (SECURITY.md, "Known limitations").
   */
  private parse(body: string): Shape | undefined {
    try {
      const s = JSON.parse(body) as Shape;
      const ok =
        typeof s.table === 'string' &&
        typeof s.sourceId === 'string' &&
        typeof s.partialSql === 'string' &&
        Array.isArray(s.values) &&
        s.values.every((v) => v === null || typeof v === 'string') &&
        [s.startParam, s.endParam].every((i) => Number.isInteger(i) && i >= 0 && i < s.values.length && s.values[i] === null) &&
        this.sourceOf(s.table)?.id === s.sourceId;
      if (!ok) return undefined;
      const hash = shapeHash(s);
      if (!this.validated.has(hash)) {
        validatePostgres(s.partialSql);
        if (this.validated.size >= 2 * MAX_SHAPES) this.validated.clear();
        this.validated.add(hash);
      }
      return s;
    } catch {
      return undefined;
    }
  }

  private count(event: string, n: number): void {
    if (n > 0) this.options.metrics?.hourlyEvents.inc({ event }, n);
  }
}
