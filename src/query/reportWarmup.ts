/**
 * Studio's report pages kept warm (docs/ARCHITECTURE.md, "Hourly partials"): the hours of each of
 * Studio's report queries (src/query/studioReports.ts) for the busiest projects of its table,
 * computed before anyone opens the page.
 *
 * Why: the background keeps the hours of a query only once a load asked for it
 * (src/query/hourlyBackground.ts), so the first load of a report nobody opened within the last
 * 7 days ran whole: the 7-day API report's 8 queries took 2–3 times as long as from kept hours on
 * lq_bench_10m (BENCHMARKS.md, "The hourly split at 10M"). Studio's report queries are a fixed set
 * that its code sends to `logs.all`, so the service computes their hours as it does for a report a
 * user opened: each piece at the scheduler's background priority, after the work for the shapes
 * users asked for. If Studio changes a query, it is simply no longer matched: its first load runs
 * whole, as before.
 *
 * Each tick of the background (one process at a time, under its lock) asks `due`:
 * - the WARM_PROJECTS busiest projects of each table a report reads, by their share of its
 *   NEWEST_EVENTS newest events (one query per table, at most once a PROJECTS_EVERY_MS);
 * - each report query's shape for each of them, as a load of `logs.all` would register it (the
 *   endpoint service's own translation, src/endpoints/queryService.ts `splitShape`): registered
 *   once a FULL_EVERY_MS as if last asked for WARM_AGE_MS ago, so the shapes users asked for
 *   lately come first in the background's budget (hourlyBackground.ts MAX_SHAPES, which holds the
 *   warm ones too), and the ticks keep each hour as it closes;
 * - once a FULL_EVERY_MS per shape, all of it: the hours of the last WARM_DAYS days not kept yet
 *   (all of them after a start, or after Redis lost them), FILLS_PER_TICK shapes a tick.
 *
 * Only tables that `logs.all` filters by the top-level `project` column (src/sources/defaults.ts)
 * are warmed: the busiest projects are read from that column.
 */
import { DEFAULT_SOURCES } from '../sources/defaults.js';
import type { SourceService } from '../sources/service.js';
import { logTableName, qualifiedTable, type Queryable } from '../storage/logTables.js';
import { lastClosedHours, type Shape } from './hourlySplit.js';
import { STUDIO_REPORTS } from './studioReports.js';

/** Projects kept warm per table: a self-hosted install has one; the busiest few of a shared one. */
export const WARM_PROJECTS = 3;
/** The longest window of Studio's report pages: the hours kept for a shape. */
export const WARM_DAYS = 7;
/** A warm shape ranks in the registry as if last asked for this long ago (under hourlyStore.ts SHAPE_RECENT_MS, 7 days). */
export const WARM_AGE_MS = 6 * 86_400_000;
const PROJECTS_EVERY_MS = 10 * 60_000;
/**
 * Shapes whose last WARM_DAYS days one tick queues, at most: the tick holds its lock until its
 * work is done (hourlyBackground.ts LOCK_MS), and user work queued meanwhile waits behind it. On
 * lq_bench_10m a shape's 7 days for the largest project take ~3 s, so a tick stays well under a
 * minute and the warm-up from nothing (114 shapes) spreads over ~15 ticks.
 */
export const FILLS_PER_TICK = 8;
/** The newest events of a table the busiest projects are counted in. */
const NEWEST_EVENTS = 10_000;
const FULL_EVERY_MS = 60 * 60_000;
const HOUR_MS = 3_600_000;
/** The endpoint Studio sends its report queries to (seeds/queries.ts LOGS_ALL_SQL). */
const LOGS_ALL = 'logs.all';

export interface WarmupDeps {
  /** The shape of a load of `logs.all` with these query-string values (queryService.ts `splitShape`). */
  splitShape(endpoint: string, input: Record<string, string>): Promise<Shape | undefined>;
  sources: Pick<SourceService, 'list'>;
  /** Where the busiest projects are read (the primary). */
  db: Queryable;
}

export interface WarmWork {
  /** Shapes to register now (each once a FULL_EVERY_MS), at the rank `at` (WARM_AGE_MS ago). */
  readonly register: ReadonlyArray<{ readonly shape: Shape; readonly at: number }>;
  /** At most FILLS_PER_TICK shapes whose last WARM_DAYS days are due, with those hours; `filled(key)` once one is queued. */
  readonly fill: ReadonlyArray<{ readonly key: string; readonly shape: Shape; readonly hours: readonly number[] }>;
}

export class ReportWarmup {
  /** Looked up at most once a PROJECTS_EVERY_MS: table → its busiest projects. */
  private readonly projects = new Map<string, { at: number; value: string[] }>();
  /** Looked up at most once a FULL_EVERY_MS: report id → the source table it reads, when `logs.all` filters it by project. */
  private readonly tables = new Map<string, { at: number; value: string | undefined }>();
  /** By `<report id> <project>`: when its shape was last registered, and when its days were last queued. */
  private readonly registeredAt = new Map<string, number>();
  private readonly filledAt = new Map<string, number>();

  constructor(private readonly deps: WarmupDeps) {}

  /**
   * What this tick should do. A shape is translated only when it is due (once an hour at most), so
   * the ticks in between cost a few map lookups.
   */
  async due(now: number): Promise<WarmWork> {
    const register: Array<{ shape: Shape; at: number }> = [];
    const fill: Array<{ key: string; shape: Shape; hours: number[] }> = [];
    const warm = new Set<string>();
    const reports: Array<{ id: string; sql: string; projects: string[] }> = [];
    for (const report of STUDIO_REPORTS) {
      const table = await timed(this.tables, report.id, FULL_EVERY_MS, now, () => this.tableOf(report.sql, now));
      if (!table) continue;
      // Its table's busiest projects (one lookup per table, kept for PROJECTS_EVERY_MS).
      reports.push({ ...report, projects: await timed(this.projects, table, PROJECTS_EVERY_MS, now, () => this.busiest(table)) });
    }
    // The busiest project's reports first (the API report's queries lead the list), then the next project's.
    for (let rank = 0; rank < WARM_PROJECTS; rank++) {
      for (const { id, sql, projects } of reports) {
        const project = projects[rank];
        if (project === undefined) continue;
        const key = `${id} ${project}`;
        warm.add(key);
        const registering = now - (this.registeredAt.get(key) ?? -Infinity) >= FULL_EVERY_MS;
        const filling = fill.length < FILLS_PER_TICK && now - (this.filledAt.get(key) ?? -Infinity) >= FULL_EVERY_MS;
        const shape = registering || filling ? await this.shapeFor(sql, project, now) : undefined;
        if (!shape) continue;
        if (registering) {
          this.registeredAt.set(key, now);
          register.push({ shape, at: now - WARM_AGE_MS });
        }
        if (filling) fill.push({ key, shape, hours: lastClosedHours(now, WARM_DAYS * 24) });
      }
    }
    // Projects gone quiet are forgotten, so the maps stay bounded.
    for (const map of [this.registeredAt, this.filledAt]) for (const key of map.keys()) if (!warm.has(key)) map.delete(key);
    return { register, fill };
  }

  /** The background queued the fill `key` of `due` (a fill it dropped is offered again next tick). */
  filled(key: string, now: number): void {
    this.filledAt.set(key, now);
  }

  /** The source table a report reads, from its shape for any project (`project` is required), when `logs.all` filters it by the top-level project. */
  private async tableOf(sql: string, now: number): Promise<string | undefined> {
    const planTable = (await this.shapeFor(sql, 'any', now))?.table;
    const source = planTable ? this.deps.sources.list().find((s) => logTableName(s.table_name) === planTable) : undefined;
    const field = source && DEFAULT_SOURCES.find((d) => d.name === source.name)?.project;
    return field === 'project' ? source!.table_name : undefined;
  }

  private shapeFor(sql: string, project: string, now: number): Promise<Shape | undefined> {
    // Any window: the shape's window values are left out (hourlySplit.ts Shape).
    return this.deps.splitShape(LOGS_ALL, {
      sql,
      project,
      iso_timestamp_start: new Date(now - HOUR_MS).toISOString(),
      iso_timestamp_end: new Date(now).toISOString(),
    });
  }

  /**
   * The WARM_PROJECTS busiest projects of `table`, by their share of its newest events: a quiet
   * install still warms the projects it last heard from, and the read is the timestamp index's
   * newest NEWEST_EVENTS entries (18 ms at 10M).
   */
  private async busiest(table: string): Promise<string[]> {
    const { rows } = await this.deps.db.query<{ project: string }>(
      `SELECT project FROM (SELECT project FROM ${qualifiedTable(table)} ORDER BY "timestamp" DESC LIMIT ${NEWEST_EVENTS}) AS newest
        GROUP BY project ORDER BY count(*) DESC, project LIMIT ${WARM_PROJECTS}`,
    );
    return rows.map((r) => r.project);
  }
}

/** `map`'s value for `key` when looked up less than `everyMs` before `now`; else looked up again by `load` and kept. */
async function timed<V>(
  map: Map<string, { at: number; value: V }>,
  key: string,
  everyMs: number,
  now: number,
  load: () => Promise<V>,
): Promise<V> {
  const known = map.get(key);
  if (known && now - known.at < everyMs) return known.value;
  const value = await load();
  map.set(key, { at: now, value });
  return value;
}
