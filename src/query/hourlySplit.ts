/**
 * The hourly split of aggregate queries over a time window (docs/ARCHITECTURE.md "Hourly partials"):
 * a query frontend with a per-hour results cache, as in Loki and Cortex, with exact invalidation.
 *
 * Why: Studio's 7-day reports aggregate millions of rows per load, and all but the last hour of them
 * is history. The window (start, end] is cut at hour boundaries: each closed hour fully inside it
 * (ending at least CLOSED_AFTER_MS before now) is read from Redis when cached; the rest (the
 * hours not cached, the open hour, the fractions at both edges) is computed by the partial query
 * (src/sql/postgres/decompose.ts) with the window's parameters narrowed, and the closed hours so
 * computed are stored. The final query merges all partial rows and applies the original select
 * list, HAVING, ORDER BY and LIMIT.
 *
 * `runSplit` answers `undefined` whenever it does not apply (shape not recognised, window
 * parameters missing or not ISO timestamps, no closed hour inside the window, Redis away, a write
 * version bump still pending in this process): the caller then runs the query whole. With a
 * background (the service's, src/query/hourlyBackground.ts) it also answers `undefined` when more
 * than half the closed hours are missing, and hands them to the background: computing them in the
 * load would make it slower than the whole query (every hour computed: 1.5× whole, BENCHMARKS.md),
 * so a first load is never slower than with the split off, and the next one reads them.
 *
 * Each piece runs in its own read-only transaction (src/query/execute.ts): pieces are disjoint in
 * time, so the answer is that of a read of each hour at some moment during the load.
 */
import { createHash } from 'node:crypto';
import { BadRequestError } from '../errors.js';
import type { Translation } from '../sql/index.js';
import { validatePostgres } from '../sql/validate.js';
import { decompose, type Decomposition } from '../sql/postgres/decompose.js';
import { keepSeconds, type HourlyStore } from './hourlyStore.js';
import type { QueryRun } from './execute.js';
import type { HourlyBackground } from './hourlyBackground.js';

export const HOUR_MS = 3_600_000;
/** An hour is closed, and cacheable, once it ended this long ago: late events of the last moments settle. */
export const CLOSED_AFTER_MS = 60_000;
/**
 * Past this many partial rows in one load the query runs whole: the merge would hold them all in
 * memory and send them as one parameter (the API report's largest, 7 days of path × method ×
 * search × status on lq_bench_10m, is ~91k).
 */
export const MAX_PARTIAL_ROWS = 1_000_000;

/** Runs one query read-only; `cacheable: false` when it read a copy that may lag behind the write versions (a replica). */
export type Runner = (
  sql: string,
  values: Array<string | null | Array<string | null>>,
  options?: { workMemKb?: number },
) => Promise<QueryRun & { cacheable?: boolean }>;

/** work_mem of a partial query (execute.ts `workMemKb`): room to hash ~100k groups of hour × keys. */
export const PARTIAL_WORK_MEM_KB = 64 * 1024;

const plans = new WeakMap<Translation, Decomposition | null>();
/** The partial query's column types, once known (null: a type that does not round-trip, never split). */
const columnTypes = new WeakMap<Decomposition, string[] | null>();

/** The decomposition of a translation, computed once per translation object (translations are cached). */
export function planOf(translation: Translation): Decomposition | undefined {
  let plan = plans.get(translation);
  if (plan === undefined) {
    plan = (translation.tree && decompose(translation.tree)) || null;
    if (plan) {
      try {
        validatePostgres(plan.partialSql); // wall 2 holds for the partial query as for every query it runs
      } catch {
        plan = null;
      }
    }
    plans.set(translation, plan);
  }
  return plan ?? undefined;
}

/** Postgres type OIDs of the partial columns that round-trip through JSON text (decompose.ts RECORD_TYPES). */
const TYPE_NAMES: Readonly<Record<number, string>> = {
  16: 'boolean',
  20: 'bigint',
  21: 'smallint',
  23: 'integer',
  25: 'text',
  701: 'float8',
  1043: 'text',
  1082: 'date',
  1114: 'timestamp',
  1184: 'timestamptz',
  1186: 'interval',
  1700: 'numeric',
};

/** An ISO 8601 UTC timestamp as the API takes it, in epoch microseconds; undefined for anything else. */
export function isoMicros(value: string | null | undefined): number | undefined {
  const m = value ? /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?Z$/.exec(value) : null;
  if (!m) return undefined;
  const ms = Date.parse(m[1] + 'Z');
  return Number.isNaN(ms) ? undefined : ms * 1000 + Number((m[2] ?? '').padEnd(6, '0'));
}

/** Epoch microseconds as an ISO timestamp with 6 fractional digits (logs.bq_timestamp reads them all). */
function microsIso(us: number): string {
  const ms = Math.floor(us / 1000);
  return new Date(ms).toISOString().slice(0, 23) + String(us - ms * 1000).padStart(3, '0') + 'Z';
}

export interface SplitStats {
  cachedHours: number;
  computedHours: number;
  pieces: number;
  /** Loads answered whole because most closed hours were missing (handed to the background). */
  coldLoads?: number;
}

/** The source a plan reads, as the catalog has it now. */
export interface SplitSource {
  /** Keys its partials with the table: another install sharing Redis never reads them. */
  readonly id: string;
  /** How long its hours are kept (hourlyStore.ts keepSeconds). */
  readonly retentionDays: number;
}
export type SourceOf = (table: string) => SplitSource | undefined;

/**
 * One query's partials, whatever its window: what keys them, and all it takes to compute any hour
 * of them (the background computes hours of shapes registered by other processes).
 */
export interface Shape {
  readonly table: string;
  /** '' when no catalog was given (runSplit without `sourceOf`). */
  readonly sourceId: string;
  readonly partialSql: string;
  readonly startParam: number;
  readonly endParam: number;
  /** The parameter values, the window's two null. */
  readonly values: ReadonlyArray<string | null>;
}

export function shapeHash(shape: Shape): string {
  return createHash('sha256')
    .update(shape.table)
    .update('\0')
    .update(shape.sourceId)
    .update('\0')
    .update(shape.partialSql)
    .update('\0')
    .update(JSON.stringify(shape.values))
    .digest('base64url');
}

/** The closed hours H with [H, H+1h) inside (start, end] (µs): H > start, H + 1h <= end, ended CLOSED_AFTER_MS before `now`. */
function closedHours(start: number, end: number, now: number): number[] {
  const hours: number[] = [];
  const last = Math.min(end / 1000, now - CLOSED_AFTER_MS);
  for (let h = Math.floor(start / 1000 / HOUR_MS) * HOUR_MS + HOUR_MS; h + HOUR_MS <= last; h += HOUR_MS) hours.push(h);
  return hours;
}

/** The newest `count` closed hours at `now`, oldest first. */
export function lastClosedHours(now: number, count: number): number[] {
  const last = Math.floor((now - CLOSED_AFTER_MS) / HOUR_MS) * HOUR_MS - HOUR_MS;
  return Array.from({ length: count }, (_, i) => last - (count - 1 - i) * HOUR_MS);
}

/** The partial keys of `hours`, under their write versions: read before any piece takes its snapshot (hourlyStore.ts, exactness). */
async function hourKeys(shape: Shape, hours: readonly number[], store: HourlyStore): Promise<string[]> {
  const hash = shapeHash(shape);
  const versions = await store.versions(shape.table, hours);
  return hours.map((h, i) => `hp:${hash}:${h}:${versions[i]}`);
}

/**
 * Runs the partial query over (lo, hi] (µs) and keeps the closed hours of `covered` (each inside
 * (lo, hi] whole): empty ones too, an hour without rows is an answer. Undefined when the partial
 * rows are past the executor's byte cap (hour × keys of a high-cardinality grouping): the query
 * whole may still answer. Nothing is kept from a read replica (`cacheable: false`).
 */
async function computePiece(
  shape: Shape,
  lo: number,
  hi: number,
  covered: ReadonlyArray<{ hour: number; key: string }>,
  run: Runner,
  store: HourlyStore,
  retentionDays: number | undefined,
  now: number,
): Promise<(QueryRun & { cacheable?: boolean }) | undefined> {
  const narrowed = [...shape.values];
  narrowed[shape.startParam] = microsIso(lo);
  narrowed[shape.endParam] = microsIso(hi);
  const piece = await run(shape.partialSql, narrowed, { workMemKb: PARTIAL_WORK_MEM_KB }).catch((err: unknown) => {
    if (err instanceof BadRequestError && err.details.some((d) => d.reason === 'resultTooLarge')) return undefined;
    throw err;
  });
  if (!piece) return undefined;
  const byHour = new Map(covered.map(({ hour, key }) => [hour, { key, rows: [] as Array<Array<string | null>> }]));
  for (const r of piece.rows) byHour.get(Number(r[0]) * 1000)?.rows.push(r);
  const entries: Array<[string, string, number]> = [];
  for (const [hour, { key, rows }] of byHour) {
    const seconds = keepSeconds(hour, retentionDays, now);
    if (seconds > 0) entries.push([key, JSON.stringify(rows), seconds]);
  }
  if (piece.cacheable !== false) await store.putPartials(entries).catch(() => undefined);
  return piece;
}

export interface SplitOptions {
  /** The catalog: the plan's table must be in it (else the query runs whole); its id and retention key and keep the partials. */
  sourceOf?: SourceOf;
  /** Registers each load's shape, and takes the missing hours of a load that ran whole because most were missing. */
  background?: Pick<HourlyBackground, 'register' | 'fill'>;
}

/**
 * The shape a load of `translation` with `values` registers and keys its hours with; undefined
 * when the query does not decompose or its table is not in the catalog. What src/query/reportWarmup.ts
 * computes hours for, so that they are the ones a load of the same query reads.
 */
export function shapeOf(translation: Translation, values: ReadonlyArray<string | null>, sourceOf: SourceOf): Shape | undefined {
  const plan = planOf(translation);
  const source = plan && sourceOf(plan.table);
  return plan && source && shapeOfPlan(plan, values, source);
}

function shapeOfPlan(plan: Decomposition, values: ReadonlyArray<string | null>, source: SplitSource | undefined): Shape {
  return {
    table: plan.table,
    sourceId: source?.id ?? '',
    partialSql: plan.partialSql,
    startParam: plan.startParam,
    endParam: plan.endParam,
    values: values.map((v, i) => (i === plan.startParam || i === plan.endParam ? null : v)),
  };
}

export async function runSplit(
  translation: Translation,
  values: Array<string | null>,
  run: Runner,
  store: HourlyStore,
  now: number = Date.now(),
  stats?: SplitStats,
  options: SplitOptions = {},
): Promise<QueryRun | undefined> {
  const plan = planOf(translation);
  if (!plan || columnTypes.get(plan) === null || store.hasPending()) return undefined;
  const start = isoMicros(values[plan.startParam]);
  const end = isoMicros(values[plan.endParam]);
  if (start === undefined || end === undefined || end <= start) return undefined;
  const hours = closedHours(start, end, now);
  if (!hours.length) return undefined;
  const source = options.sourceOf?.(plan.table);
  if (options.sourceOf && !source) return undefined;
  const shape = shapeOfPlan(plan, values, source);
  options.background?.register(shape);
  let cached: Array<string | null>;
  let keys: string[];
  try {
    keys = await hourKeys(shape, hours, store);
    cached = await store.getPartials(keys);
  } catch {
    return undefined;
  }
  // More than half missing: computing them here costs about what the whole query does or more (an
  // hour computed alone is ~1.5× its share of the whole query, its groups are per hour), so the
  // load runs whole and the background computes them for the next one.
  const missing = hours.filter((_, i) => cached[i] === null);
  if (options.background && missing.length * 2 > hours.length) {
    options.background.fill(shape, missing);
    if (stats) stats.coldLoads = (stats.coldLoads ?? 0) + 1;
    return undefined;
  }

  // The pieces to compute: (start, end] less the cached hours, as (lower, upper] in microseconds.
  const pieces: Array<[number, number]> = [];
  let lower = start;
  hours.forEach((h, i) => {
    if (cached[i] === null) return;
    if (lower < h * 1000 - 1) pieces.push([lower, h * 1000 - 1]);
    lower = (h + HOUR_MS) * 1000 - 1;
  });
  if (lower < end) pieces.push([lower, end]);

  let types = columnTypes.get(plan) ?? undefined;
  const rows: Array<Array<string | null>> = [];
  for (const c of cached) if (c !== null) for (const r of JSON.parse(c) as Array<Array<string | null>>) rows.push(r);
  if (rows.length > MAX_PARTIAL_ROWS) return undefined;
  for (const [lo, hi] of pieces) {
    // The closed hours this piece covers whole are kept.
    const covered = hours
      .map((hour, i) => ({ hour, key: keys[i] }))
      .filter(({ hour }, i) => cached[i] === null && hour * 1000 > lo && (hour + HOUR_MS) * 1000 - 1 <= hi);
    const piece = await computePiece(shape, lo, hi, covered, run, store, source?.retentionDays, now);
    if (!piece) return undefined;
    types ??= piece.fields.map((f) => TYPE_NAMES[f.dataTypeID]);
    for (const r of piece.rows) rows.push(r);
    if (rows.length > MAX_PARTIAL_ROWS) return undefined;
    if (stats) stats.computedHours += covered.length;
  }
  if (stats) {
    stats.cachedHours += cached.filter((c) => c !== null).length;
    stats.pieces += pieces.length;
  }
  // Types of the partial columns: from a piece run now, or else from the cached rows' query run
  // once more over an empty window (cheap: the index finds nothing).
  if (!types) {
    const empty = [...values];
    empty[plan.startParam] = microsIso(end);
    empty[plan.endParam] = microsIso(end);
    types = (await run(plan.partialSql, empty)).fields.map((f) => TYPE_NAMES[f.dataTypeID]);
  }
  const final = types.every((t) => t !== undefined) ? plan.finalQuery(types) : undefined;
  columnTypes.set(plan, final ? types : null);
  if (!final) return undefined;
  const names = ['h', ...Array.from({ length: plan.keys }, (_, i) => `k${i}`), ...Array.from({ length: plan.partials }, (_, i) => `a${i}`)];
  const json = JSON.stringify(rows.map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]]))));
  return run(final.sql, [json, ...final.params.map((i) => values[i])]);
}

/**
 * Computes and keeps the hours of `shape` among `hours` (closed, ascending) not kept yet and not
 * past retention, in pieces of at most `pieceHours` consecutive hours, one query each: the
 * background's work (src/query/hourlyBackground.ts). Answers how many hours it kept.
 */
export async function fillHours(
  shape: Shape,
  hours: readonly number[],
  run: Runner,
  store: HourlyStore,
  retentionDays: number | undefined,
  now: number,
  pieceHours: number,
  /** True once the caller stops (the service closing): no further piece is started. */
  stopped: () => boolean = () => false,
): Promise<number> {
  // Redis refused this process's last bumps: the work waits until it answers, as its loads do.
  if (store.hasPending()) return 0;
  const wanted = hours.filter((h) => h + HOUR_MS <= now - CLOSED_AFTER_MS && keepSeconds(h, retentionDays, now) > 0);
  if (!wanted.length) return 0;
  const keys = await hourKeys(shape, wanted, store);
  const kept = await store.kept(keys);
  const todo = wanted.map((hour, i) => ({ hour, key: keys[i] })).filter((_, i) => !kept[i]);
  let done = 0;
  for (let i = 0; i < todo.length && !stopped();) {
    let j = i + 1;
    while (j < todo.length && j - i < pieceHours && todo[j].hour === todo[j - 1].hour + HOUR_MS) j++;
    const covered = todo.slice(i, j);
    const lo = covered[0].hour * 1000 - 1;
    const hi = (covered[covered.length - 1].hour + HOUR_MS) * 1000 - 1;
    const piece = await computePiece(shape, lo, hi, covered, run, store, retentionDays, now);
    if (piece && piece.cacheable !== false) done += covered.length;
    i = j;
  }
  return done;
}
