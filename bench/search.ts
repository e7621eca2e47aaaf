/**
 * Message search side by side on one database (bench/data.ts `lq_bench_1m` or `lq_bench_10m`):
 * the logs explorer's search query for edge logs over the last 7 days (the dashboard corpus'
 * `preview/edge_logs/search-quote`, test/compat/studio/) translated by the service, run as the
 * service prints it now (`event_message LIKE '%…%'`, served by the trigram index of
 * src/storage/searchIndexes.ts) and as it printed it before (`strpos(event_message, …) > 0`: a scan
 * of every message in the window), interleaved, medians, on one connection with the service's
 * planner settings. Needles: a token that occurs once in the 7 days, and a word in every message.
 *
 * First the service's own index upkeep builds the search indexes (the code path the minute job
 * runs: CONCURRENTLY, partition by partition), timed; then the sizes of the indexes against the
 * table's.
 *
 *   npx tsx bench/search.ts [--size 1m|10m] [--rounds 5] [--own] [--measure-only]
 *
 * `--own`: on a database of its own, `lq_search_<size>` (the same generator and size), so the
 * migration and the indexes never touch a `lq_bench_*` database others are measuring on.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { normaliseEvents } from '../src/ingest/normalise.js';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { initTranslator, translateQuery } from '../src/sql/index.js';
import { LOGS_ALL_SQL } from '../seeds/queries.js';
import { createContext } from '../src/context.js';
import { PLANNER_OPTIONS } from '../src/db/readOnlySession.js';
import { createLogger } from '../src/logger.js';
import { ADMIN_URL, databaseUrl, testConfig } from '../test/support/db.js';
import { BENCH_PROJECT, benchEnv, ensureBenchData, ensureData, SIZES, type Size } from './data.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const SIZE = arg('--size', '1m') as Size;
if (!(SIZE in SIZES)) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
const ROUNDS = Number(arg('--rounds', '5'));
const EDGE = 'logs.cloudflare_logs_prod';
const DAY_MS = 86_400_000;

const studio = JSON.parse(readFileSync(new URL('../test/compat/studio/queries.json', import.meta.url), 'utf8')) as Array<{
  id: string;
  sql: string;
}>;
const EXPLORER_SEARCH = studio.find((q) => q.id === 'preview/edge_logs/search-quote')!.sql;

const log = (l: string) => console.error(l);
const OWN = `lq_search_${SIZE}`;
const MEASURE_ONLY = process.argv.includes('--measure-only');
// `--measure-only` takes the data as it is (no top-up, whose ANALYZE takes minutes on a loaded machine).
const db = MEASURE_ONLY
  ? { url: databaseUrl(ADMIN_URL, process.argv.includes('--own') ? OWN : `lq_bench_${SIZE}`), rows: SIZES[SIZE].rows }
  : process.argv.includes('--own')
    ? await ensureData({ name: OWN, label: SIZE, ...SIZES[SIZE] }, { log })
    : await ensureBenchData(SIZE, { log });
const ctx = await createContext(testConfig(db.url, benchEnv()), createLogger('silent'));
let built: { seconds: number; steps: number } | undefined;
const lookup = ctx.sources.lookup;
try {
  // `--measure-only`: the indexes as they are (another run of the upkeep may be building or compacting them).
  if (!MEASURE_ONLY) {
    const started = performance.now();
    const steps = await ctx.sources.runIndexUpkeep();
    const searchSteps = steps.filter((s) => /^(built|compacted) .*_search_/.test(s)).length;
    built = { seconds: (performance.now() - started) / 1000, steps: searchSteps };
    console.error(`index upkeep: ${steps.length} steps (${searchSteps} of search indexes) in ${built.seconds.toFixed(0)} s`);
  }
} finally {
  await ctx.close();
}

const client = new pg.Client({ connectionString: db.url, options: `${PLANNER_OPTIONS} -c TimeZone=UTC` });
await client.connect();
const one = async <T extends pg.QueryResultRow>(text: string, values: unknown[] = []) => (await client.query<T>(text, values)).rows[0];

// The table: heap and TOAST of every partition; the search indexes: the GIN indexes on them.
const sizes = await one<{ table_bytes: string; search_bytes: string }>(
  `SELECT sum(pg_total_relation_size(p.oid) - pg_indexes_size(p.oid))::bigint AS table_bytes,
          sum((SELECT coalesce(sum(pg_relation_size(i.indexrelid)), 0) FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                WHERE i.indrelid = p.oid AND ic.relam = (SELECT oid FROM pg_am WHERE amname = 'gin')))::bigint AS search_bytes
     FROM pg_inherits h JOIN pg_class p ON p.oid = h.inhrelid WHERE h.inhparent = $1::regclass`,
  [EDGE],
);

const now = Date.now();
// A token of one message: the random hex of an edge event, with the constant that follows it.
const needle = (
  await one<{ token: string }>(
    `SELECT substring(event_message from '\\| ([0-9a-f]{8}6d4558de) \\|') AS token FROM ${EDGE}
    WHERE "timestamp" > now() - interval '3 days' AND project = $1 LIMIT 1`,
    [BENCH_PROJECT],
  )
).token;
const searches = [
  { id: 'needle (one message in 7 days)', word: needle },
  { id: 'common word (every edge message)', word: 'Mozilla' },
];

await initTranslator();

function translated(word: string): { now: string; before: string; values: unknown[] } {
  const sql = EXPLORER_SEARCH.replace("'it''s'", `'${word}'`);
  const t = translateQuery({ query: LOGS_ALL_SQL, sandboxSql: sql, sources: lookup, maxRows: 1000 });
  const params: Record<string, string> = {
    project: BENCH_PROJECT,
    iso_timestamp_start: new Date(now - 7 * DAY_MS).toISOString(),
    iso_timestamp_end: new Date(now).toISOString(),
  };
  // The same translation as the service printed it before (src/sql/postgres/search.ts): strpos.
  const before = t.sql.replace(/\(([\w."]+) LIKE '%([^']*)%'\)/, (_m, col: string, w: string) => `(strpos(${col}, '${w}') > 0)`);
  if (before === t.sql) throw new Error(`no LIKE in:\n${t.sql}`);
  return { now: t.sql, before, values: t.parameters.map((p) => params[p] ?? null) };
}

async function timed(text: string, values: unknown[]): Promise<{ ms: number; rows: number }> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    const started = performance.now();
    const { rows } = await client.query(text, values);
    return { ms: performance.now() - started, rows: rows.length };
  } finally {
    await client.query('ROLLBACK');
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const results = [];
for (const s of searches) {
  const q = translated(s.word);
  const nowMs: number[] = [];
  const beforeMs: number[] = [];
  let rows = { now: 0, before: 0 };
  for (let r = 0; r < ROUNDS; r++) {
    const a = await timed(q.now, q.values);
    const b = await timed(q.before, q.values);
    nowMs.push(a.ms);
    beforeMs.push(b.ms);
    rows = { now: a.rows, before: b.rows };
  }
  if (rows.now !== rows.before) throw new Error(`${s.id}: ${rows.now} rows against ${rows.before}`);
  const plan = (await client.query(`EXPLAIN ${q.now}`, q.values)).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
  results.push({
    id: s.id,
    rows: rows.now,
    nowMs: median(nowMs),
    beforeMs: median(beforeMs),
    ratio: median(nowMs) / median(beforeMs),
    usesIndex: /_search_|_c[0-9a-f]{8}/.test(plan) && /Bitmap Index Scan/.test(plan),
  });
}
// Ingest: the same 1,000 edge rows inserted, round after round, into two copies of today's
// partition (its indexes), one with its search index (fastupdate on, as the open day: the pending
// list is merged when it passes gin_pending_list_limit, within these rounds) and one without;
// interleaved, the insert's wall time counted as Postgres CPU. Normalising those events in the
// service (CPU) puts it against the whole ingest path.
const today = (
  await one<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid
    WHERE h.inhparent = $1::regclass ORDER BY 1 DESC OFFSET 2 LIMIT 1`,
    [EDGE],
  )
).name;
const insertMs: Record<'with' | 'without', number[]> = { with: [], without: [] };
await client.query(`CREATE TEMP TABLE probe_rows AS SELECT * FROM logs.${today} LIMIT 1000`);
for (const kind of ['with', 'without'] as const) {
  await client.query(`CREATE TABLE public.probe_${kind} (LIKE logs.${today} INCLUDING ALL)`);
  if (kind === 'without')
    for (const { name } of (
      await client.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE i.indrelid = 'public.probe_without'::regclass AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'gin')`,
      )
    ).rows)
      await client.query(`DROP INDEX public."${name}"`);
}
const hasSearchIndex = (
  await one<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = 'public.probe_with'::regclass AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'gin')`,
  )
).n;
for (let r = 0; r < 30; r++) {
  for (const kind of ['with', 'without'] as const) {
    const started = performance.now();
    await client.query(`INSERT INTO public.probe_${kind} SELECT * FROM probe_rows`);
    if (r >= 5) insertMs[kind].push(performance.now() - started);
  }
}
await client.query('DROP TABLE public.probe_with, public.probe_without');
const { rows: sample } = await client.query<{ event_message: string; project: string; metadata: unknown }>(
  'SELECT event_message, project, metadata FROM probe_rows',
);
const events = sample.map((r, i) => ({
  event_message: r.event_message,
  project: r.project,
  metadata: unwrap(r.metadata),
  timestamp: new Date(now - i * 1000).toISOString(),
}));
const normaliseTimes: number[] = [];
for (let i = 0; i < 20; i++) {
  const start = process.cpuUsage();
  normaliseEvents(events, { nowMs: now, retentionDays: 30 });
  const d = process.cpuUsage(start);
  if (i >= 5) normaliseTimes.push((d.user + d.system) / 1000);
}
const ingest = {
  searchIndexOnProbe: hasSearchIndex > 0,
  insertWithMs: median(insertMs.with),
  insertWithoutMs: median(insertMs.without),
  normaliseMs: median(normaliseTimes),
  risePerEvent: (median(insertMs.with) - median(insertMs.without)) / (median(normaliseTimes) + median(insertMs.without)),
};

/** Stored JSON (one-element arrays) back to the objects a shipper sends. */
function unwrap(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 1 ? unwrap(v[0]) : v.map(unwrap);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unwrap(x)]));
  return v;
}

await client.end();

const mb = (b: string | number) => (Number(b) / 1e6).toFixed(0);
console.log(
  JSON.stringify(
    {
      size: SIZE,
      rows: db.rows,
      build: built,
      edgeTableMB: Number(mb(sizes.table_bytes)),
      searchIndexMB: Number(mb(sizes.search_bytes)),
      indexShare: Number(sizes.search_bytes) / Number(sizes.table_bytes),
      searches: results,
      ingest,
      loadAverage: loadavg()[0],
    },
    null,
    1,
  ),
);
