/**
 * The hourly split (src/query/hourlySplit.ts) on Studio's 7-day API report, its 8 queries at once
 * (bench/studio.ts), as the service runs them: each query of a load in a slot of the query
 * scheduler (QUERY_SLOTS), the background's pieces at its background priority
 * (src/query/hourlyBackground.ts). Read-only on the data; the partials go to Redis under a
 * namespace of their own, deleted at the end. Measures:
 *
 * - whole: the split off;
 * - first load: nothing kept, as a user sees it (most hours missing: whole, the hours handed to
 *   the background), then how long until the background has kept them ("background warm");
 * - after background warm: loads reading the kept hours;
 * - the window moved 5 minutes; and an hour later, once the tick has computed the hour that closed.
 *
 * Checks that the answers equal the whole ones (float8 columns to a relative 1e-9).
 *
 *   npx tsx bench/hourly.ts [--size 1m|10m] [--rounds 3] [--no-write]
 *
 * Prints figures and rewrites the `hourly-bench-<size>` block of BENCHMARKS.md unless `--no-write`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { createClient } from 'redis';
import { createContext } from '../src/context.js';
import { createLogger } from '../src/logger.js';
import { executeReadOnly, type QueryRun } from '../src/query/execute.js';
import { HourlyStore } from '../src/query/hourlyStore.js';
import { catalogSourceOf, HourlyBackground } from '../src/query/hourlyBackground.js';
import { CLOSED_AFTER_MS, HOUR_MS, runSplit, shapeOf, type Runner, type SplitStats } from '../src/query/hourlySplit.js';
import { ReportWarmup } from '../src/query/reportWarmup.js';
import type { Grant } from '../src/rateLimit/scheduler.js';
import { initTranslator, translateQuery, type Translation } from '../src/sql/index.js';
import { LOGS_ALL_SQL } from '../seeds/queries.js';
import { ADMIN_URL, databaseUrl, testConfig } from '../test/support/db.js';
import { BENCH_PROJECT, benchEnv, SIZES, type Size } from './data.js';

const { values: opts } = parseArgs({
  options: {
    size: { type: 'string', default: '10m' },
    rounds: { type: 'string', default: '3' },
    'no-write': { type: 'boolean', default: false },
  },
});
const SIZE = opts.size as Size;
if (!(SIZE in SIZES)) throw new Error('bad --size');
const ROUNDS = Number(opts.rounds);
const DAY_MS = 86_400_000;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const corpus = JSON.parse(readFileSync(new URL('../test/compat/studio/queries.json', import.meta.url), 'utf8')) as Array<{
  id: string;
  sql: string;
}>;
const api = corpus.filter((q) => /^reports\/api\/[A-Za-z]+$/.test(q.id));
await initTranslator();
const ctx = await createContext(testConfig(databaseUrl(ADMIN_URL, `lq_bench_${SIZE}`), benchEnv()), createLogger('silent'));
const reader = ctx.reader!;
const meta = await ctx.db.pool.query<{ until_ms: string }>('SELECT until_ms FROM bench_meta WHERE size = $1', [SIZE]);
const dataEnd = Math.min(Date.now(), Number(meta.rows[0]?.until_ms ?? Date.now()));
const namespace = `lq:bench-hourly-${process.pid}:`;

const store = await HourlyStore.open(REDIS_URL, { namespace });

/** A query as the service runs it in a scheduler slot (queryService.ts execute). */
const runner =
  (grant: Grant): Runner =>
  (sql, values, o) =>
    executeReadOnly(reader, sql, values, { timeoutMs: 60_000, useReaderRole: false, serial: grant.serial, workMemKb: o?.workMemKb });
let clock = Date.now();
const background = new HourlyBackground(store, {
  run: (sql, values, o) => ctx.limiter.background((grant) => runner(grant)(sql, values, o)),
  sourceOf: catalogSourceOf(ctx.sources),
  metrics: ctx.metrics,
  now: () => clock,
});
const hoursComputed = async () =>
  (await ctx.metrics.hourlyEvents.get()).values.find((v) => v.labels.event === 'hours_computed')?.value ?? 0;
const translations: Translation[] = api.map((q) =>
  translateQuery({ query: LOGS_ALL_SQL, sandboxSql: q.sql, sources: ctx.sources.lookup, maxRows: 1000 }),
);
const valuesAt = (t: Translation, end: number) => {
  const p: Record<string, string> = {
    project: BENCH_PROJECT,
    iso_timestamp_start: new Date(end - 7 * DAY_MS).toISOString(),
    iso_timestamp_end: new Date(end).toISOString(),
  };
  return t.parameters.map((n) => p[n] ?? null);
};
const USER = { id: 'bench-hourly' };

/** One load of the report: its 8 queries at once, each in a scheduler slot, split or whole (queryService.ts executeSplit). */
async function load(split: boolean, end: number, now: number): Promise<{ ms: number; runs: QueryRun[]; stats: SplitStats }> {
  const stats: SplitStats & { whole: number } = { cachedHours: 0, computedHours: 0, pieces: 0, coldLoads: 0, whole: 0 };
  const started = performance.now();
  const runs = await Promise.all(
    translations.map((t) =>
      ctx.limiter.query(USER, async (grant) => {
        const run = runner(grant);
        const values = valuesAt(t, end);
        if (split) {
          const r = await runSplit(t, values, run, store, now, stats, { sourceOf: background.sourceOf, background });
          if (r) return r;
          stats.whole++; // most hours missing (or Redis too slow to answer): whole, as the service does
        }
        return run(t.sql, values);
      }),
    ),
  );
  return { ms: performance.now() - started, runs, stats };
}

function same(a: QueryRun, b: QueryRun): boolean {
  if (a.fields.map((f) => `${f.name}:${f.dataTypeID}`).join() !== b.fields.map((f) => `${f.name}:${f.dataTypeID}`).join()) return false;
  if (a.rows.length !== b.rows.length) return false;
  const floats = a.fields.map((f) => f.dataTypeID === 701);
  const key = (r: Array<string | null>) => JSON.stringify(r.map((v, i) => (floats[i] ? null : v)));
  const sa = [...a.rows].sort((x, y) => key(x).localeCompare(key(y)));
  const sb = [...b.rows].sort((x, y) => key(x).localeCompare(key(y)));
  return sa.every((r, i) =>
    r.every((v, j) =>
      floats[j] && v !== null && sb[i][j] !== null
        ? Math.abs(Number(v) - Number(sb[i][j])) <= 1e-9 * Math.max(1, Math.abs(Number(v)))
        : v === sb[i][j],
    ),
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => `${Math.round(x).toLocaleString('en')} ms`;
const loads: number[] = [loadavg()[0]];
/** Rows of the generated block: what was measured, the time, and whether the rows equal the whole query's. */
const table: Array<[string, string, string]> = [];
const now = clock;
const whole: number[] = [];
let reference: QueryRun[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const w = await load(false, dataEnd, now);
  whole.push(w.ms);
  reference = w.runs;
}
console.log(`whole, 8 at once: median ${median(whole).toFixed(0)} ms (${whole.map((x) => x.toFixed(0)).join(', ')})`);
table.push(['whole (split off), median', `${ms(median(whole))} (${whole.map(ms).join(', ')})`, '–']);

const firstStarted = performance.now();
const first = await load(true, dataEnd, now);
console.log(
  `first load (nothing kept), as a user sees it: ${first.ms.toFixed(0)} ms`,
  first.stats,
  first.runs.every((r, i) => same(r, reference[i])) ? 'rows equal' : 'ROWS DIFFER',
);
table.push([
  'first load, nothing kept (runs whole, hands the hours to the background)',
  ms(first.ms),
  first.runs.every((r, i) => same(r, reference[i])) ? 'yes' : '**no**',
]);
await background.idle();
const warmedMs = performance.now() - firstStarted;
console.log(`background warm: hours kept ${warmedMs.toFixed(0)} ms after the first load started (${await hoursComputed()} hours computed)`);
table.push([
  'the background has kept every closed hour',
  `${ms(warmedMs)} after the first load started (${await hoursComputed()} hours)`,
  '–',
]);
loads.push(loadavg()[0]);
/** ROUNDS split loads of the window ending at dataEnd: their times, and whether every answer equals the whole query's. */
async function splitLoads(atNow: number, label: string): Promise<{ times: number[]; ok: boolean }> {
  const times: number[] = [];
  let ok = true;
  for (let r = 0; r < ROUNDS; r++) {
    const w = await load(true, dataEnd, atNow);
    times.push(w.ms);
    ok &&= w.runs.every((x, i) => same(x, reference[i]));
    if (r === 0) console.log(`  ${label}, stats`, w.stats);
  }
  return { times, ok };
}
const { times: warm, ok: warmOk } = await splitLoads(now, 'after background warm');
console.log(
  `after background warm: median ${median(warm).toFixed(0)} ms (${warm.map((x) => x.toFixed(0)).join(', ')})`,
  warmOk ? 'rows equal' : 'ROWS DIFFER',
);
table.push(['**next loads, hours kept**, median', `**${ms(median(warm))}** (${warm.map(ms).join(', ')})`, warmOk ? 'yes' : '**no**']);
/** A split load and the whole one at the same moment: printed, and a row of the block. */
function sideBySide(label: string, split: Awaited<ReturnType<typeof load>>, whole: Awaited<ReturnType<typeof load>>): void {
  const equal = split.runs.every((x, i) => same(x, whole.runs[i]));
  console.log(
    `${label}: split ${split.ms.toFixed(0)} ms`,
    split.stats,
    `whole ${whole.ms.toFixed(0)} ms`,
    equal ? 'rows equal' : 'ROWS DIFFER',
  );
  table.push([`${label}: split / whole`, `${ms(split.ms)} / ${ms(whole.ms)}`, equal ? 'yes' : '**no**']);
}
const moved = dataEnd + 5 * 60_000;
const wholeMoved = await load(false, moved, now + 5 * 60_000);
sideBySide('window moved 5 minutes', await load(true, moved, now + 5 * 60_000), wholeMoved);
// An hour later (the clock moved by hand): the tick computes the hour that closed for the 8 shapes.
clock = now + HOUR_MS + CLOSED_AFTER_MS;
const before = await hoursComputed();
const tickStarted = performance.now();
await background.tick();
console.log(`tick an hour later: ${(performance.now() - tickStarted).toFixed(0)} ms, ${(await hoursComputed()) - before} hours computed`);
const later = await load(true, dataEnd + HOUR_MS, clock);
sideBySide('an hour later, after the tick computed the hour that closed', later, await load(false, dataEnd + HOUR_MS, clock));
loads.push(loadavg()[0]);

// Studio's reports kept warm (src/query/reportWarmup.ts): from nothing kept (a start, or Redis
// emptied), the ticks register the report shapes of the busiest projects and compute their last
// 7 days; then the report's first load, which no one asked for before. The clock is where the data
// ends, as for a live install whose report window ends now.
const cleaner = createClient({ url: REDIS_URL });
await cleaner.connect();
for await (const keys of cleaner.scanIterator({ MATCH: `${namespace}*`, COUNT: 1000 })) if (keys.length) await cleaner.del(keys);
await cleaner.quit();
clock = dataEnd + CLOSED_AFTER_MS;
const sourceOf = catalogSourceOf(ctx.sources);
background.warmWith(
  new ReportWarmup({
    splitShape: async (_endpoint, input) => {
      const t = translateQuery({ query: LOGS_ALL_SQL, sandboxSql: input.sql, sources: ctx.sources.lookup, maxRows: 1000 });
      return shapeOf(
        t,
        t.parameters.map((n) => input[n] ?? null),
        sourceOf,
      );
    },
    sources: ctx.sources,
    db: ctx.db.pool,
  }),
);
// Ticks one after another (the service's are a minute apart) until one computes nothing more:
// each queues at most FILLS_PER_TICK shapes' days, the busiest project's API report first.
const warmBefore = await hoursComputed();
const warmStarted = performance.now();
let ticks = 0;
let firstTickSeconds = 0;
for (let last = -1, computed = warmBefore; computed !== last; ticks++) {
  last = computed;
  await background.tick();
  if (!ticks) firstTickSeconds = (performance.now() - warmStarted) / 1000;
  computed = await hoursComputed();
}
const warmSeconds = (performance.now() - warmStarted) / 1000;
const warmHours = (await hoursComputed()) - warmBefore;
console.log(
  `warm-up from nothing kept: ${warmSeconds.toFixed(0)} s over ${ticks} ticks (the first ${firstTickSeconds.toFixed(0)} s), ${warmHours} hours computed`,
);
table.push([
  "Studio's reports kept warm: the warm-up from nothing kept (ticks back to back)",
  `${warmSeconds.toFixed(0)} s, ${ticks} ticks, the first (the API report of the busiest project) ${firstTickSeconds.toFixed(0)} s (${warmHours} hours)`,
  '–',
]);
const { times: warmFirst, ok: warmFirstOk } = await splitLoads(clock, 'first load with the reports kept warm');
console.log(
  `first load, reports kept warm: ${warmFirst.map((x) => x.toFixed(0)).join(', ')} ms`,
  warmFirstOk ? 'rows equal' : 'ROWS DIFFER',
);
table.push([
  "**first load of the report (no one opened it), Studio's reports kept warm**; then two more",
  `**${ms(warmFirst[0])}** (${warmFirst.slice(1).map(ms).join(', ')})`,
  warmFirstOk ? 'yes' : '**no**',
]);
loads.push(loadavg()[0]);

if (!opts['no-write']) {
  const tag = `hourly-bench-${SIZE}`;
  const lines = [
    `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, \`lq_bench_${SIZE}\`, Studio's 7-day API report for the largest project, its 8 queries at once in ${ctx.config.querySlots} scheduler slots, load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} on 2 cores (\`npx tsx bench/hourly.ts --size ${SIZE}\`).`,
    '',
    "| load | time | rows equal the whole query's |",
    '|---|---:|---|',
    ...table.map((r) => `| ${r.join(' | ')} |`),
  ];
  const file = new URL('../BENCHMARKS.md', import.meta.url);
  const text = readFileSync(file, 'utf8');
  const re = new RegExp(`<!-- ${tag}:start -->[^]*<!-- ${tag}:end -->`);
  const block = `<!-- ${tag}:start -->\n${lines.join('\n')}\n<!-- ${tag}:end -->`;
  if (!re.test(text)) throw new Error(`BENCHMARKS.md has no ${tag} block`);
  writeFileSync(file, text.replace(re, block));
}

background.close();
await store.close();
const redis = createClient({ url: REDIS_URL });
await redis.connect();
for await (const keys of redis.scanIterator({ MATCH: `${namespace}*`, COUNT: 1000 })) if (keys.length) await redis.del(keys);
await redis.quit();
await ctx.close();
