/**
 * Studio's pages at volume (bench/data.ts `lq_bench_1m` or `lq_bench_10m`): the dashboard corpus'
 * own SQL (test/compat/studio/queries.json) translated by the service and run by its read-only
 * executor on the reader's connections (src/query/execute.ts, the path of every query the service
 * answers, less HTTP and the cache), for the largest project, windows ending now:
 *
 * - each logs explorer default page (`preview/<table>/default`), the last hour;
 * - the API, Auth, Storage, Realtime and Edge Functions reports (`reports/api/*`, `reports/auth/*`,
 *   `reports/storage/*`, `reports/shared-api/realtime/*`, `reports/edge-functions/*`, without the
 *   filtered variants), over 24 hours and 7 days, one at a time;
 * - the API report over 7 days as Studio loads it: its 8 queries at once, the wall time until the
 *   last answers.
 *
 * Medians of `--rounds` runs (one warm-up first), the service's 15 s limit.
 *
 *   npx tsx bench/studio.ts [--size 1m|10m] [--rounds 3] [--no-write] [--database <another copy>]
 *
 * Takes the data as it is (no top-up to now: `npm run bench` does that), windows ending where it
 * ends. Rewrites the
 * `studio-bench-<size>` block of BENCHMARKS.md unless `--no-write`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { createContext } from '../src/context.js';
import { createLogger } from '../src/logger.js';
import { executeReadOnly } from '../src/query/execute.js';
import { initTranslator, translateQuery } from '../src/sql/index.js';
import { LOGS_ALL_SQL } from '../seeds/queries.js';
import { ADMIN_URL, databaseUrl, testConfig } from '../test/support/db.js';
import { BENCH_PROJECT, benchEnv, SIZES, type Size } from './data.js';

const { values: opts } = parseArgs({
  options: {
    size: { type: 'string', default: '1m' },
    rounds: { type: 'string', default: '3' },
    'no-write': { type: 'boolean' },
    /** Another database of the size's data (a copy with other hot leaves, say): figures to bench/results only. */
    database: { type: 'string' },
  },
});
if (!(opts.size in SIZES)) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
const SIZE = opts.size as Size;
const ROUNDS = Number(opts.rounds);
const TIMEOUT_MS = 15_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

interface StudioQuery {
  id: string;
  sql: string;
}
const corpus = JSON.parse(readFileSync(new URL('../test/compat/studio/queries.json', import.meta.url), 'utf8')) as StudioQuery[];
const explorer = corpus.filter((q) => /^preview\/[a-z_]+\/default$/.test(q.id));
const reports = corpus.filter((q) => /^reports\/(api|auth|storage|edge-functions|shared-api\/realtime)\/[A-Za-z]+$/.test(q.id));
const apiReport = reports.filter((q) => q.id.startsWith('reports/api/'));
if (apiReport.length !== 8) throw new Error(`the API report has ${apiReport.length} queries, not 8`);

const DATABASE = opts.database ?? `lq_bench_${SIZE}`;
const url = databaseUrl(ADMIN_URL, DATABASE);
await initTranslator();
const ctx = await createContext(testConfig(url, benchEnv()), createLogger('silent'));
if (!ctx.reader) throw new Error('no reader login on this database');
const reader = ctx.reader;
// Windows end where the data ends (bench/data.ts writes up to its `until_ms`; no top-up here), so
// the last hour is a full hour of events however long ago the data was made.
const meta = await ctx.db.pool.query<{ until_ms: string }>('SELECT until_ms FROM bench_meta WHERE size = $1', [SIZE]);
const now = Math.min(Date.now(), Number(meta.rows[0]?.until_ms ?? Date.now()));

/** The query translated as the service does for `logs.all` (sandboxed SQL), with its values for a window of `spanMs` ending now. */
function prepared(q: StudioQuery, spanMs: number): { sql: string; values: Array<string | null> } {
  const t = translateQuery({ query: LOGS_ALL_SQL, sandboxSql: q.sql, sources: ctx.sources.lookup, maxRows: 1000 });
  const params: Record<string, string> = {
    project: BENCH_PROJECT,
    iso_timestamp_start: new Date(now - spanMs).toISOString(),
    iso_timestamp_end: new Date(now).toISOString(),
  };
  return { sql: t.sql, values: t.parameters.map((p) => params[p] ?? null) };
}

/** One run through the executor: ms, or the error's code (57014: the 15 s limit). */
async function run(p: { sql: string; values: Array<string | null> }): Promise<{ ms: number; error?: string }> {
  const started = performance.now();
  try {
    await executeReadOnly(reader, p.sql, p.values, { timeoutMs: TIMEOUT_MS, useReaderRole: false });
    return { ms: performance.now() - started };
  } catch (err) {
    return { ms: performance.now() - started, error: (err as { code?: string }).code ?? (err as Error).message };
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Figure {
  id: string;
  window: string;
  ms: number;
  errors: number;
  /** The first failure's code or message (57014: the 15 s limit). */
  error?: string;
}
const figures: Figure[] = [];
async function measure(q: StudioQuery, window: string, spanMs: number): Promise<void> {
  const p = prepared(q, spanMs);
  const warm = await run(p);
  const runs = [];
  // A query that passes the limit while warming up would pass it each round: counted as failed, not run again.
  if (warm.error) for (let r = 0; r < ROUNDS; r++) runs.push(warm);
  else for (let r = 0; r < ROUNDS; r++) runs.push(await run(p));
  const f = {
    id: q.id,
    window,
    ms: median(runs.map((x) => x.ms)),
    errors: runs.filter((x) => x.error).length,
    error: runs.find((x) => x.error)?.error,
  };
  figures.push(f);
  console.error(
    `${f.id.padEnd(50)} ${window.padEnd(4)} ${f.ms.toFixed(1).padStart(9)} ms${f.errors ? ` (${f.errors} failed: ${f.error})` : ''}`,
  );
}

for (const q of explorer) await measure(q, '1 h', HOUR_MS);
for (const q of reports)
  for (const [window, span] of [
    ['24 h', DAY_MS],
    ['7 d', 7 * DAY_MS],
  ] as const)
    await measure(q, window, span);

// Studio's 7-day API report: its 8 queries at once, as the page sends them.
const batch = apiReport.map((q) => prepared(q, 7 * DAY_MS));
const together: number[] = [];
let failed = 0;
for (let r = 0; r < ROUNDS; r++) {
  const started = performance.now();
  const runs = await Promise.all(batch.map(run));
  together.push(performance.now() - started);
  failed += runs.filter((x) => x.error).length;
}
const apiReportMs = median(together);
console.error(`API report, 7 days, 8 at once: ${apiReportMs.toFixed(0)} ms (${failed} failed)`);
await ctx.close();

const load = loadavg()[0];
const result = {
  size: SIZE,
  rows: SIZES[SIZE].rows,
  rounds: ROUNDS,
  figures,
  apiReport7dTogetherMs: apiReportMs,
  apiReportFailed: failed,
  loadAverage: load,
};
console.log(JSON.stringify(result, null, 1));
// bench/results/ is git-ignored: a fresh clone has no such folder.
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL(`./results/studio-${DATABASE}.json`, import.meta.url), JSON.stringify(result, null, 1) + '\n');

if (!opts['no-write'] && !opts.database) {
  const ms = (x: number) => (x >= 1000 ? Math.round(x).toLocaleString('en') : x >= 100 ? x.toFixed(0) : x.toFixed(1)) + ' ms';
  const cell = (id: string, window: string) => {
    const f = figures.find((x) => x.id === id && x.window === window)!;
    return f.errors ? `failed: ${f.error === '57014' ? 'the 15 s limit' : f.error}` : ms(f.ms);
  };
  const slowestPage = Math.max(...figures.filter((f) => f.window === '1 h').map((f) => f.ms));
  const lines = [
    `Run: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, load average ${load.toFixed(1)} at the end (2 cores shared with other agents: absolute times are above their quiet values); \`lq_bench_${SIZE}\`, ${SIZES[SIZE].rows.toLocaleString('en')} rows; project \`bench00…\` (the largest); medians of ${ROUNDS} runs after a warm-up, through the service's executor (translation + read-only transaction on the reader's connections), windows ending where the data ends (${new Date(now).toISOString().slice(0, 16).replace('T', ' ')} UTC).`,
    '',
    `Studio's 7-day API report, its 8 queries at once, run whole (the hourly split off; with it, as the service runs them: "The hourly split at 10M"): **${ms(apiReportMs)}**${failed ? `, ${failed} of ${8 * ROUNDS} failed` : ''} (target ≤ 3 s — ${apiReportMs <= 3000 && !failed ? 'met' : 'missed'}). Slowest logs explorer default page (1 hour): **${ms(slowestPage)}** (target ≤ 100 ms — ${slowestPage <= 100 ? 'met' : 'missed'}).`,
    '',
    '| logs explorer default page | 1 h |',
    '|---|---:|',
    ...explorer.map((q) => `| ${q.id.split('/')[1]} | ${cell(q.id, '1 h')} |`),
    '',
    '| report query | 24 h | 7 d |',
    '|---|---:|---:|',
    ...reports.map((q) => `| ${q.id.replace(/^reports\//, '')} | ${cell(q.id, '24 h')} | ${cell(q.id, '7 d')} |`),
  ];
  const file = new URL('../BENCHMARKS.md', import.meta.url);
  const tag = `studio-bench-${SIZE}`;
  const text = readFileSync(file, 'utf8');
  const re = new RegExp(`<!-- ${tag}:start -->[^]*<!-- ${tag}:end -->`);
  if (!re.test(text)) throw new Error(`BENCHMARKS.md has no ${tag} block`);
  writeFileSync(file, text.replace(re, `<!-- ${tag}:start -->\n${lines.join('\n')}\n<!-- ${tag}:end -->`));
}
