/**
 * Hot leaves side by side on the same data (`lq_bench_1m`, bench/data.ts): every scenario of
 * bench/queries.ts translated twice — reading the hot columns (the service now) and reading only
 * the JSON (the same sources without hot leaves: the service before them) — against the old floor
 * (hand-written, leaves read by path) and a new floor (hand-written over the columns). All run with
 * `pg` on one connection with the service's planner settings (PLANNER_OPTIONS) and UTC, interleaved, medians. Then 20
 * clients at once running the uncached dashboard queries, both translations; storage of the
 * columns; and the ingest cost of filling them (the writer's COPY text, and the COPY itself).
 *
 *   npx tsx bench/hot.ts [--rounds 7] [--no-write]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { finished } from 'node:stream/promises';
import { initTranslator } from '../src/sql/index.js';
import { normaliseEvents } from '../src/ingest/normalise.js';
import { copyChunks } from '../src/ingest/write.js';
import { FactsObserver } from '../src/storage/hotLeafFacts.js';
import { hotColumnName } from '../src/storage/hotLeaves.js';
import type { SourceLookup, SourceTable } from '../src/sources/schema.js';
import { createContext } from '../src/context.js';
import { PLANNER_OPTIONS } from '../src/db/readOnlySession.js';
import { createLogger } from '../src/logger.js';
import { testConfig } from '../test/support/db.js';
import { BENCH_PROJECT, benchEnv, ensureBenchData } from './data.js';
import { runClients } from './load.js';
import { SCENARIOS, translatedScenario } from './queries.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROUNDS = arg('--rounds', 7);
const WRITE = !process.argv.includes('--no-write');
const EDGE = 'logs.cloudflare_logs_prod';
const HOUR_MS = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Hand-written SQL over the columns (the new floor), by scenario id; buckets by date_bin, the cheapest truncation. */
function newFloor(id: string, now: number): { text: string; values: unknown[] } {
  const win = (h: number) => [BENCH_PROJECT, iso(now - h * HOUR_MS), iso(now)];
  const usage = (unit: string, window: string) => ({
    text: `SELECT date_bin('1 ${unit}', "timestamp", '1970-01-01 00:00:00+00')::timestamp AS timestamp,
       count(*) FILTER (WHERE strpos(p, '/rest') > 0) AS total_rest_requests,
       count(*) FILTER (WHERE strpos(p, '/storage') > 0) AS total_storage_requests,
       count(*) FILTER (WHERE strpos(p, '/auth') > 0) AS total_auth_requests,
       count(*) FILTER (WHERE strpos(p, '/realtime') > 0) AS total_realtime_requests
  FROM (SELECT "timestamp", "metadata.request.path" AS p FROM ${EDGE}
         WHERE "timestamp" >= now() - interval '${window}' AND strpos("metadata.request.url", $1) > 0) x
 GROUP BY 1 ORDER BY 1`,
    values: [BENCH_PROJECT],
  });
  const status = '"metadata.response.status_code"';
  switch (id) {
    case 'usage-minutely':
      return usage('minute', '60 minutes');
    case 'usage-hourly':
      return usage('hour', '1 hour');
    case 'usage-daily':
      return usage('day', '7 days');
    case 'logs-all':
      return SCENARIOS.find((s) => s.id === id)!.floor(now);
    case 'a-chart':
      return {
        text: `SELECT date_bin('1 minute', "timestamp", '1970-01-01 00:00:00+00') AS timestamp, count(*) FILTER (WHERE ${status} < 400) AS ok_count,
       count(*) FILTER (WHERE ${status} >= 400 AND ${status} < 500) AS warning_count, count(*) FILTER (WHERE ${status} >= 500) AS error_count
  FROM ${EDGE} WHERE project = $1 AND "timestamp" > $2 AND "timestamp" <= $3 GROUP BY 1 ORDER BY 1`,
        values: win(6),
      };
    case 'b-pg-errors':
      return {
        text: `SELECT id, "timestamp", event_message, "metadata.parsed.error_severity" AS error_severity FROM logs.postgres_logs
 WHERE project = $1 AND "timestamp" > $2 AND "timestamp" <= $3 AND "metadata.parsed.error_severity" IN ('ERROR', 'FATAL', 'PANIC')
 ORDER BY "timestamp" DESC LIMIT 100`,
        values: win(24),
      };
    case 'c-5xx':
      return {
        text: `SELECT count(*) AS count FROM ${EDGE} WHERE project = $1 AND "timestamp" > $2 AND "timestamp" <= $3 AND ${status} >= 500`,
        values: win(24),
      };
    case 'd-newest':
      return {
        text: `SELECT id, "timestamp", "metadata.request.method" AS method, "metadata.request.path" AS path, ${status} AS status_code, event_message
  FROM ${EDGE} WHERE project = $1 AND "timestamp" > $2 AND "timestamp" <= $3 ORDER BY "timestamp" DESC LIMIT 100`,
        values: win(1),
      };
    case 'e-top-paths':
      return {
        text: `SELECT "metadata.request.path" AS path, count(*) AS count FROM ${EDGE}
 WHERE project = $1 AND "timestamp" > $2 AND "timestamp" <= $3 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10`,
        values: win(24),
      };
  }
  throw new Error(id);
}

const log = (l: string) => console.error(l);
const db = await ensureBenchData('1m', { log });
const ctx = await createContext(testConfig(db.url, benchEnv()), createLogger('silent'));
await initTranslator();
await ctx.sources.reload();
// A database made before hot leaves gets them from the service's start-up (pending backfill):
// filled here, then rewritten compactly, so both layouts are measured on the same settled data.
const backfilled = await ctx.sources.runHotLeafBackfill();
if (backfilled.length) {
  log(`backfilled ${backfilled.length} partitions; VACUUM FULL ANALYZE`);
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  for (const s of ctx.sources.list())
    if (s.hot_leaves?.length) await admin.query(`VACUUM FULL ANALYZE logs.${JSON.stringify(s.table_name)}`);
  await admin.end();
}
// The covering indexes (the service's index upkeep job), and a VACUUM for the visibility map that
// index-only scans rely on (the service leaves it to autovacuum: src/storage/logTables.ts).
const indexed = await ctx.sources.runIndexUpkeep();
if (indexed.length) log(`index upkeep: ${indexed.join(', ')}`);
{
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  for (const s of ctx.sources.list()) if (s.hot_leaves?.length) await admin.query(`VACUUM ANALYZE logs.${JSON.stringify(s.table_name)}`);
  await admin.end();
}
const hot: SourceLookup = ctx.sources.lookup;
const stripped = new Map<string, SourceTable | undefined>();
const cold: SourceLookup = (name) => {
  if (!stripped.has(name)) {
    const t = hot(name);
    stripped.set(name, t && { name: t.name, pgSchema: t.pgSchema, table: t.table, fields: t.fields });
  }
  return stripped.get(name);
};

const client = new pg.Client({ connectionString: db.url, options: `${PLANNER_OPTIONS} -c TimeZone=UTC` });
await client.connect();
const now = Date.now();
type Q = { text: string; values: unknown[] };
const translated = (s: (typeof SCENARIOS)[number], sources: SourceLookup): Q => translatedScenario(s, sources, now);
const time = async (q: Q, on: pg.Client = client) => {
  const start = performance.now();
  const r = await on.query(q.text, q.values);
  return { ms: performance.now() - start, rows: r.rowCount ?? 0 };
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

// The service as issue 17 found it: its translations (bench/baseline/dump-translations.ts), run
// with its settings of the time (jit off, the default parallel_tuple_cost) on its own connection.
const BASELINE: Record<string, { sql: string; parameters: string[] }> = JSON.parse(
  readFileSync(new URL('./baseline/service-before-hot-leaves.json', import.meta.url), 'utf8'),
);
const issueClient = new pg.Client({ connectionString: db.url, options: '-c jit=off -c TimeZone=UTC' });
await issueClient.connect();
const baseline = (s: (typeof SCENARIOS)[number]): Q => {
  const params = s.params(now);
  const b = BASELINE[s.id];
  return { text: b.sql, values: b.parameters.map((p) => params[p] ?? null) };
};

type Variant = 'now' | 'issue' | 'before' | 'oldFloor' | 'newFloor';
const rows: ({ id: string; title: string } & Record<Variant, number>)[] = [];
for (const s of SCENARIOS) {
  const variants: Record<Variant, Q> = {
    now: translated(s, hot),
    issue: baseline(s),
    before: translated(s, cold),
    oldFloor: s.floor(now),
    newFloor: newFloor(s.id, now),
  };
  const run = (k: Variant) => time(variants[k], k === 'issue' ? issueClient : client);
  const times: Record<Variant, number[]> = { now: [], issue: [], before: [], oldFloor: [], newFloor: [] };
  const kinds = Object.keys(variants) as Variant[];
  for (const k of kinds) await run(k); // warm-up
  const rounds = s.id === 'usage-daily' ? Math.max(3, ROUNDS >> 1) : ROUNDS;
  for (let r = 0; r < rounds; r++) for (const k of kinds) times[k].push((await run(k)).ms);
  const m = Object.fromEntries(kinds.map((k) => [k, median(times[k])])) as Record<Variant, number>;
  rows.push({ id: s.id, title: s.title, ...m });
  log(
    `${s.id}: hot ${m.now.toFixed(1)} ms, as the issue found it ${m.issue.toFixed(1)} ms, JSON ${m.before.toFixed(1)} ms, old floor ${m.oldFloor.toFixed(1)}, new floor ${m.newFloor.toFixed(1)}`,
  );
}
await issueClient.end();

// 20 clients at once, each running the uncached dashboard queries in turn for DURATION.
const DASHBOARD = SCENARIOS.filter((s) => s.id !== 'usage-daily');
const DURATION_MS = 15_000;
async function concurrent(sources: SourceLookup) {
  const pool = new pg.Pool({ connectionString: db.url, max: 20, options: `${PLANNER_OPTIONS} -c TimeZone=UTC` });
  const queries = DASHBOARD.map((s) => translated(s, sources));
  try {
    return await runClients(20, DURATION_MS / 1000, async (i) => {
      const q = queries[i % queries.length];
      await pool.query(q.text, q.values);
      return true;
    });
  } finally {
    await pool.end();
  }
}
const concHot = await concurrent(hot);
const concCold = await concurrent(cold);
log(
  `20 clients: hot ${concHot.qps.toFixed(0)} q/s p99 ${concHot.p99.toFixed(0)} ms; JSON ${concCold.qps.toFixed(0)} q/s p99 ${concCold.p99.toFixed(0)} ms`,
);

// Storage and ingest on two probe tables, each filled the way ingest fills a partition (rows in
// the order they were written, indexes kept up row by row): the edge table's layout now (hot
// columns, covering indexes) and as it was before hot leaves (six columns, the two plain indexes).
const edge = hot('cloudflare.logs.prod')!;
const hotColumns = edge.hot!.map((l) => JSON.stringify(hotColumnName(l.path)));
const FIXED = 'id, "timestamp", event_message, project, metadata, body';
await client.query('DROP TABLE IF EXISTS public.probe_now, public.probe_before');
await client.query(`CREATE UNLOGGED TABLE public.probe_now (LIKE ${EDGE} INCLUDING ALL)`);
await client.query(`CREATE UNLOGGED TABLE public.probe_before (LIKE ${EDGE} INCLUDING COMPRESSION INCLUDING STORAGE)`);
await client.query(`ALTER TABLE public.probe_before ${hotColumns.map((c) => `DROP COLUMN ${c}`).join(', ')}`);
await client.query('CREATE INDEX ON public.probe_before ("timestamp" DESC)');
await client.query('CREATE INDEX ON public.probe_before (project, "timestamp" DESC)');
const { rows: days } = await client.query<{ name: string }>(
  `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = '${EDGE}'::regclass ORDER BY c.reltuples DESC LIMIT 1`,
);
const day = `logs.${JSON.stringify(days[0].name)}`;
// Rows in time order, as ingest writes them.
await client.query(
  `INSERT INTO public.probe_now (${FIXED}, ${hotColumns.join(', ')}) SELECT ${FIXED}, ${hotColumns.join(', ')} FROM ${day} ORDER BY "timestamp"`,
);
await client.query(`INSERT INTO public.probe_before (${FIXED}) SELECT ${FIXED} FROM ${day} ORDER BY "timestamp"`);
const size = async (t: string) => Number((await client.query(`SELECT pg_total_relation_size('${t}') AS b`)).rows[0].b);
const storageWriting = await size('public.probe_now');
const storageBefore = await size('public.probe_before');
// Once the day is over, the index upkeep rebuilds its covering indexes full (src/storage/indexUpkeep.ts, step 4).
const { rows: probeIndexes } = await client.query<{ name: string }>(
  `SELECT indexrelid::regclass::text AS name FROM pg_index WHERE indrelid = 'public.probe_now'::regclass`,
);
for (const { name } of probeIndexes) {
  await client.query(`ALTER INDEX ${name} SET (fillfactor = 100)`);
  await client.query(`REINDEX INDEX ${name}`);
}
const storageNow = await size('public.probe_now');
const pct = (bytes: number) => (100 * (bytes - storageBefore)) / storageBefore;
const { rows: dayRows } = await client.query(`SELECT count(*)::int AS n FROM ${day}`);
log(
  `storage of one day (${dayRows[0].n} rows): before ${(storageBefore / 1e6).toFixed(0)} MB; now ${(storageWriting / 1e6).toFixed(0)} MB while written, ${(storageNow / 1e6).toFixed(0)} MB once over`,
);

// Ingest: the writer's COPY text for 1,000 edge rows with and without the columns (Node CPU), and
// the COPY itself into the probes (Postgres: the columns, the wider index entries).
const { rows: sample } = await client.query(`SELECT metadata, event_message, project FROM ${EDGE} LIMIT 1000`);
const events = sample.map((r, i) => ({
  event_message: r.event_message,
  project: r.project,
  metadata: JSON.parse(JSON.stringify(unwrap(r.metadata))),
  timestamp: new Date(now - i * 1000).toISOString(),
}));
const batch = normaliseEvents(events, { nowMs: now, retentionDays: 30 }).rows;
const cpu = (withHot: boolean) => {
  const times: number[] = [];
  for (let i = 0; i < 60; i++) {
    const start = process.cpuUsage();
    copyChunks(batch, withHot ? new FactsObserver(edge.hot!, edge.table) : undefined);
    const d = process.cpuUsage(start);
    times.push((d.user + d.system) / 1000);
  }
  return median(times.slice(10));
};
const cpuHot = cpu(true);
const cpuCold = cpu(false);
// What every ingest path does before those, the same in both layouts: normalising the events.
const normaliseMs = (() => {
  const times: number[] = [];
  for (let i = 0; i < 30; i++) {
    const start = process.cpuUsage();
    normaliseEvents(events, { nowMs: now, retentionDays: 30 });
    const d = process.cpuUsage(start);
    times.push((d.user + d.system) / 1000);
  }
  return median(times.slice(5));
})();
const copyMs = async (withHot: boolean) => {
  const times: number[] = [];
  const probe = withHot ? 'public.probe_now' : 'public.probe_before';
  const columns = `(${FIXED}${withHot ? ', ' + hotColumns.join(', ') : ''})`;
  for (let i = 0; i < 15; i++) {
    const chunks = copyChunks(batch, withHot ? new FactsObserver(edge.hot!, edge.table) : undefined);
    const start = performance.now();
    const stream = client.query(copyFrom(`COPY ${probe} ${columns} FROM STDIN`));
    for (const c of chunks) stream.write(c);
    stream.end();
    await finished(stream);
    times.push(performance.now() - start);
  }
  return median(times.slice(3));
};
const copyHot = await copyMs(true);
const copyCold = await copyMs(false);
await client.query('DROP TABLE public.probe_now, public.probe_before');

function unwrap(v: unknown): unknown {
  if (Array.isArray(v))
    return v.length === 1 && typeof v[0] === 'object' && v[0] !== null && !Array.isArray(v[0]) ? unwrap(v[0]) : v.map(unwrap);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unwrap(x)]));
  return v;
}

const f = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1)) + ' ms';
const lines = [
  `Run: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; load average at start ${loadavg()[0].toFixed(1)}; \`${db.name}\`, ${db.rows.toLocaleString('en')} rows; medians of ${ROUNDS} interleaved rounds (usage daily: ${Math.max(3, ROUNDS >> 1)}) after a warm-up, \`pg\` on one connection with the service's settings.`,
  '',
  '| scenario | now | as the issue found it | speed-up | JSON reads today (no columns) | new floor (columns) | now / new floor | old floor (JSON by path) |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.title} | ${f(r.now)} | ${f(r.issue)} | ${(r.issue / r.now).toFixed(1)}× | ${f(r.before)} | ${f(r.newFloor)} | ${(r.now / r.newFloor).toFixed(2)} | ${f(r.oldFloor)} |`,
  ),
  '',
  `20 clients at once, ${DURATION_MS / 1000} s each, the uncached dashboard queries (every scenario but usage daily) in turn, sent with \`pg\`: hot columns ${concHot.qps.toFixed(0)} queries/s, p99 ${f(concHot.p99)}; JSON reads ${concCold.qps.toFixed(0)} queries/s, p99 ${f(concCold.p99)}.`,
  '',
  `Storage, one day of edge rows (${dayRows[0].n.toLocaleString('en')}) written in time order as ingest writes them, heap and indexes: before hot leaves ${(storageBefore / 1e6).toFixed(0)} MB; with the hot columns and covering indexes ${(storageWriting / 1e6).toFixed(0)} MB (+${pct(storageWriting).toFixed(1)}%) while the day is written, ${(storageNow / 1e6).toFixed(0)} MB (+${pct(storageNow).toFixed(1)}%) once its covering indexes are rebuilt full after the day.`,
  `Ingest, 1,000 edge rows: the writer's COPY text ${cpuHot.toFixed(1)} ms CPU with the columns against ${cpuCold.toFixed(1)} ms without (+${((100 * (cpuHot - cpuCold)) / cpuCold).toFixed(0)}%); the COPY into the day's layout ${f(copyHot)} against ${f(copyCold)} (+${((100 * (copyHot - copyCold)) / copyCold).toFixed(0)}%). With normalising (${normaliseMs.toFixed(1)} ms), the in-process path (no HTTP, no JSON.parse) costs ${(normaliseMs + cpuHot + copyHot).toFixed(1)} ms against ${(normaliseMs + cpuCold + copyCold).toFixed(1)} ms: +${((100 * (cpuHot + copyHot - cpuCold - copyCold)) / (normaliseMs + cpuCold + copyCold)).toFixed(0)}% per event (the COPY's wall time counted as Postgres CPU).`,
];
console.log(lines.join('\n'));
if (WRITE) {
  const file = new URL('../BENCHMARKS.md', import.meta.url);
  const text = readFileSync(file, 'utf8');
  const block = `<!-- hot-bench:start -->\n${lines.join('\n')}\n<!-- hot-bench:end -->`;
  writeFileSync(file, text.replace(/<!-- hot-bench:start -->[^]*<!-- hot-bench:end -->/, block));
}
await client.end();
await ctx.close();
