/**
 * Scaling of one Postgres (docs/SCALING.md): the same generator as the benchmarks (bench/data.ts)
 * at three sizes in databases of their own, `lq_scale_*`, and the benchmark queries
 * (bench/queries.ts) and ingest measured on each.
 *
 *   npx tsx bench/scaling.ts generate [1m,5m,25m]   COPY the data (reused when complete)
 *   npx tsx bench/scaling.ts measure  [1m,5m,25m]   window queries and ingest on each
 *   npx tsx bench/scaling.ts drop                   drop every lq_scale_* database
 *
 * Sizes: `1m` 1M rows over 8 days (125k events/day), `5m` 5M over 40 days (the same rate, 5× the
 * history), `25m` 25M over 40 days (5× the rate of `5m`, the same history).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createContext } from '../src/context.js';
import { normaliseEvents } from '../src/ingest/normalise.js';
import { createLogger } from '../src/logger.js';
import { ADMIN_URL, databaseUrl, testConfig } from '../test/support/db.js';
import { benchEnv, ensureData, eventFor, rng, valuesFor, type DataSpec } from './data.js';
import { SCENARIOS } from './queries.js';

export const SCALE_SIZES: Record<string, DataSpec> = {
  '1m': { name: 'lq_scale_1m', label: 'scale-1m', rows: 1_000_000, days: 8 },
  '5m': { name: 'lq_scale_5m', label: 'scale-5m', rows: 5_000_000, days: 40 },
  '25m': { name: 'lq_scale_25m', label: 'scale-25m', rows: 25_000_000, days: 40 },
};

const RESULTS = new URL('./results/scaling.json', import.meta.url);

function readResults(): Record<string, unknown> {
  return existsSync(RESULTS) ? JSON.parse(readFileSync(RESULTS, 'utf8')) : {};
}
function record(key: string, value: unknown): void {
  const all = readResults();
  all[key] = value;
  mkdirSync(new URL('./', RESULTS), { recursive: true }); // git-ignored: a fresh clone has no such folder
  writeFileSync(RESULTS, JSON.stringify(all, null, 2));
}

const [command = 'generate', list = '1m,5m,25m'] = process.argv.slice(2);
const sizes = list.split(',');

if (command === 'generate') {
  for (const size of sizes) {
    const spec = SCALE_SIZES[size];
    if (!spec) throw new Error(`unknown size ${size}`);
    const log = (l: string) => console.log(`[${new Date().toISOString()}] ${l}`);
    const db = await ensureData(spec, { log });
    log(JSON.stringify(db));
    if (!db.reused) record(`generate-${size}`, { rows: db.rows, seconds: db.seconds, rowsPerSecond: Math.round(db.rows / db.seconds) });
  }
}

/** Median of a list of numbers. */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Events/s of normalise + LogWriter (what POST /api/logs does after parsing) into a database of this size. */
async function ingestRate(url: string): Promise<number> {
  const ctx = await createContext(testConfig(url, benchEnv()), createLogger('silent'));
  try {
    const source = await ctx.sources.get('cloudflare.logs.prod');
    const r = rng(7);
    const batches = Array.from({ length: 15 }, () =>
      Array.from({ length: 1000 }, () => ({ ...eventFor('cloudflare.logs.prod', valuesFor('cloudflare.logs.prod', r)), id: randomUUID() })),
    );
    const started = performance.now();
    for (const events of batches) {
      const batch = normaliseEvents(events, { nowMs: Date.now(), retentionDays: source.retention_days });
      await ctx.writer.write(source, batch.rows, batch.fields);
    }
    return Math.round((batches.length * 1000) / ((performance.now() - started) / 1000));
  } finally {
    await ctx.close();
  }
}

if (command === 'measure') {
  const ROUNDS = Number(process.env.SCALING_ROUNDS ?? 5);
  const dbs = [];
  for (const size of sizes) {
    const spec = SCALE_SIZES[size];
    const db = await ensureData(spec, { log: (l) => console.log(l) }); // tops up to now, so the last-hour windows have rows
    const client = new pg.Client({ connectionString: databaseUrl(ADMIN_URL, spec.name) });
    await client.connect();
    await client.query('SET jit = off');
    const [{ bytes }] = (await client.query('SELECT pg_database_size(current_database())::bigint AS bytes')).rows;
    dbs.push({ size, spec, url: db.url, client, bytes: Number(bytes), times: {} as Record<string, number[]> });
  }
  const scenarios = SCENARIOS.filter((s) => s.window || s.id.startsWith('usage-'));
  for (let round = 0; round <= ROUNDS; round++) {
    for (const db of dbs) {
      for (const s of scenarios) {
        const { text, values } = s.floor(Date.now());
        const started = performance.now();
        await db.client.query(text, values);
        if (round > 0) (db.times[s.id] ??= []).push(performance.now() - started); // round 0 warms the cache
      }
    }
  }
  const result: Record<string, unknown> = { at: new Date().toISOString(), load: readFileSync('/proc/loadavg', 'utf8').split(' ')[0] };
  for (const db of dbs) {
    await db.client.end();
    const ingest = await ingestRate(db.url);
    const queries = Object.fromEntries(Object.entries(db.times).map(([id, ms]) => [id, Math.round(median(ms) * 10) / 10]));
    result[db.size] = {
      rows: db.spec.rows,
      days: db.spec.days,
      perDay: db.spec.rows / db.spec.days,
      gb: db.bytes / 1e9,
      ingestEventsPerSecond: ingest,
      queriesMs: queries,
    };
    console.log(JSON.stringify({ size: db.size, ...(result[db.size] as object) }));
  }
  record(`measure-${sizes.join('-')}`, result);
}

if (command === 'drop') {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  for (const { name } of Object.values(SCALE_SIZES)) await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await client.end();
}

/** `render`: the measure of all three sizes as the table between the `scaling` markers of docs/SCALING.md. */
if (command === 'render') {
  const all = readResults() as Record<string, Record<string, unknown>>;
  const run = all['measure-1m-5m-25m'] as Record<
    string,
    { rows: number; gb: number; ingestEventsPerSecond: number; queriesMs: Record<string, number> }
  > & {
    at: string;
    load: string;
  };
  if (!run) throw new Error('no measure of 1m,5m,25m in bench/results/scaling.json');
  const [a, b, c] = [run['1m'], run['5m'], run['25m']];
  const title = (id: string) => SCENARIOS.find((s) => s.id === id)?.title ?? id;
  const lines = [
    `Run: ${run.at.slice(0, 16).replace('T', ' ')} UTC, load average ${run.load} at the end of the run (shared machine); medians of ${process.env.SCALING_ROUNDS ?? 3} interleaved rounds after one warm-up, the hand-written floor SQL of each benchmark query (bench/queries.ts) run with \`pg\` (the service adds at most 1.2× plus ~2 ms of HTTP to these, BENCHMARKS.md).`,
    '',
    '| query | 1M (8 d) | 5M (40 d) | 25M (40 d, 5× rate) | 5M / 1M (history) | 25M / 5M (rate) |',
    '|---|---:|---:|---:|---:|---:|',
    ...Object.keys(a.queriesMs).map((id) => {
      const [x, y, z] = [a.queriesMs[id], b.queriesMs[id], c.queriesMs[id]];
      return `| ${title(id)} | ${x} ms | ${y} ms | ${z} ms | ${(y / x).toFixed(2)} | ${(z / y).toFixed(2)} |`;
    }),
    `| ingest, normalise + write of 1,000-event edge batches (events/s) | ${a.ingestEventsPerSecond} | ${b.ingestEventsPerSecond} | ${c.ingestEventsPerSecond} | ${(b.ingestEventsPerSecond / a.ingestEventsPerSecond).toFixed(2)} | ${(c.ingestEventsPerSecond / b.ingestEventsPerSecond).toFixed(2)} |`,
    `| database size | ${a.gb.toFixed(1)} GB | ${b.gb.toFixed(1)} GB | ${c.gb.toFixed(1)} GB | | |`,
  ];
  const file = new URL('../docs/SCALING.md', import.meta.url);
  const text = readFileSync(file, 'utf8');
  writeFileSync(
    file,
    text.replace(/<!-- scaling:start -->[\s\S]*<!-- scaling:end -->/, `<!-- scaling:start -->\n${lines.join('\n')}\n<!-- scaling:end -->`),
  );
  console.log(lines.join('\n'));
}
